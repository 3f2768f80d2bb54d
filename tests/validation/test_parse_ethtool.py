"""ethtool -m parser: DOM readings, the module's own thresholds and flags, SFF-8636 and SFF-8472."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, ethtool

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"


def read(name):
    return (FIXTURES / name).read_text()


def flag(module, quantity, direction, level, channel):
    [found] = [
        f
        for f in module.flags
        if (f.quantity, f.direction, f.level, f.channel) == (quantity, direction, level, channel)
    ]
    return found.on


def test_ethtool_m_01_qsfp28_with_the_laser_off_has_alarms_on():
    [module] = ethtool.parse(read("ethtool_m_01_qsfp28_cwdm4_laser_off_alarms_on.txt"))
    assert (module.interface, module.identifier, module.spec) == ("ens16f1np1", "QSFP28", "SFF-8636")
    assert (module.vendor, module.part_number, module.serial) == (
        "FINISAR CORP.",
        "FTLC1152RGPL6-FB",
        "UX503M0",
    )
    assert (module.temperature_c, module.voltage_v, module.wavelength_nm) == (34.5, 3.2706, 1301.0)
    assert module.bias_ma == [0.0, 0.0, 0.0, 0.0]
    assert module.tx_power_dbm == [-40.0] * 4 and module.rx_power_dbm == [-40.0] * 4
    assert module.rx_power_mw == [0.0001] * 4
    assert module.thresholds["rx_power_dbm"] == {
        "high_alarm": 3.5,
        "low_alarm": -16.0,
        "high_warning": 2.5,
        "low_warning": -12.0,
    }
    assert module.thresholds["temperature_c"]["high_alarm"] == 60.0
    assert module.thresholds["voltage_v"]["low_warning"] == 3.135
    assert module.thresholds["bias_ma"]["low_alarm"] == 25.0
    assert module.any_alarm_on is True and module.any_warning_on is True
    assert len(module.flags) == 56  # 3 per-channel quantities x 4 channels x 4 flags + 8 module flags
    assert flag(module, "rx_power_dbm", "low", "alarm", 1) is True
    assert flag(module, "tx_power_dbm", "high", "alarm", 1) is False
    assert flag(module, "tx_power_dbm", "high", "alarm", 4) is True
    assert flag(module, "temperature_c", "high", "alarm", None) is False


def test_ethtool_m_03_sfp_single_channel_sff_8472():
    [module] = ethtool.parse(read("ethtool_m_03_sfp_sff8472_cumulus_doc.txt"))
    assert (module.interface, module.identifier, module.spec) == ("swp3", "SFP", "SFF-8472")
    assert module.vendor == "JDSU"  # padded with spaces in the EEPROM
    assert (module.bias_ma, module.tx_power_dbm, module.rx_power_dbm) == ([21.348], [-4.97], [-4.96])
    assert (module.temperature_c, module.voltage_v) == (41.7, 3.2947)
    assert module.thresholds["temperature_c"]["low_alarm"] == -40.0
    assert module.thresholds["tx_power_dbm"]["low_alarm"] == -10.0
    assert module.any_alarm_on is False and len(module.flags) == 20
    assert len(module.transceiver_types) == 7


def test_no_light_reads_as_null_dbm_and_two_modules_in_one_capture():
    text = read("ethtool_m_03_sfp_sff8472_cumulus_doc.txt")
    dark = text.replace("0.3195 mW / -4.96 dBm", "0.0000 mW / -inf dBm").replace("swp3", "swp4")
    first, second = ethtool.parse(text + "\n" + dark)
    assert (first.interface, second.interface) == ("swp3", "swp4")
    assert second.rx_power_dbm == [None] and second.rx_power_mw == [0.0]


def test_errors_name_the_line():
    text = read("ethtool_m_01_qsfp28_cwdm4_laser_off_alarms_on.txt")
    with pytest.raises(ParseError, match=r"^line 31: module temperature 'warm' is not readable"):
        ethtool.parse(text.replace("34.50 degrees C / 94.10 degrees F", "warm"))
    with pytest.raises(ParseError, match=r"^line 34: channel 99 is out of range"):
        ethtool.parse(text.replace("(Channel 1)  ", "(Channel 99)", 1))
    with pytest.raises(ParseError, match=r"^line 35: the channel number is '9999999999"):
        ethtool.parse(text.replace("(Channel 2)   ", "(Channel " + "9" * 5000 + ")", 1))
    with pytest.raises(ParseError, match=r"^line 46: Laser bias current high alarm   \(Chan 1\) is 'Maybe'"):
        ethtool.parse(text.replace("(Chan 1)  : Off", "(Chan 1)  : Maybe", 1))
    with pytest.raises(ParseError, match="no module found"):
        ethtool.parse("Vendor name : nobody\n")
