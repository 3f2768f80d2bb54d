"""The ground floor: pieces every app shares (list views, history rows, the job row, the error shape,
the Excel writer). It imports no app of this project, so any app may import it."""
