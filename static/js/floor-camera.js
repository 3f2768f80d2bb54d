/* The camera as a scanner: QR codes and Code 128 (what our labels carry) read from the video, with the
   browser's BarcodeDetector where it has one for those formats (Chrome on Android, macOS, ChromeOS),
   else with ZXing served from our own static files (static/vendor/zxing, loaded on first use: Safari
   on iPad, Firefox, Chromium on Linux). One frame is decoded at a time, a few times a second.

   window.FloorCamera.start(video, onCode, onError) -> stop(); FloorCamera.decodeCanvas(canvas) for a
   still image (used by the tests). */
(function () {
  "use strict";

  var FORMATS = ["qr_code", "code_128"];
  var INTERVAL_MS = 150;
  var zxingLoad = null;
  var detectorPromise = null;

  function decoderUrl() {
    var config = (window.FloorQueue && window.FloorQueue.config) || {};
    return config.decoder || "/static/vendor/zxing/index.min.js";
  }

  function loadZxing() {
    if (window.ZXing) return Promise.resolve(window.ZXing);
    if (zxingLoad) return zxingLoad;
    zxingLoad = new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = decoderUrl();
      script.async = true;
      script.onload = function () { window.ZXing ? resolve(window.ZXing) : reject(new Error("ZXing did not load")); };
      script.onerror = function () { zxingLoad = null; reject(new Error("The barcode decoder could not be loaded.")); };
      document.head.appendChild(script);
    });
    return zxingLoad;
  }

  /* The browser's detector when it reads our formats; null otherwise (so the caller uses ZXing). */
  function nativeDetector() {
    if (detectorPromise) return detectorPromise;
    if (window.FloorCamera && window.FloorCamera.forceZxing) return Promise.resolve(null);
    if (!("BarcodeDetector" in window)) return (detectorPromise = Promise.resolve(null));
    var supported = window.BarcodeDetector.getSupportedFormats
      ? window.BarcodeDetector.getSupportedFormats() : Promise.resolve(FORMATS);
    detectorPromise = supported.then(function (formats) {
      var usable = FORMATS.filter(function (f) { return formats.indexOf(f) >= 0; });
      return usable.length ? new window.BarcodeDetector({ formats: usable }) : null;
    }).catch(function () { return null; });
    return detectorPromise;
  }

  var zxingReader = null;
  function zxingDecode(ZXing, canvas) {
    if (!zxingReader) {
      var hints = new Map();
      hints.set(ZXing.DecodeHintType.POSSIBLE_FORMATS, [ZXing.BarcodeFormat.QR_CODE, ZXing.BarcodeFormat.CODE_128]);
      hints.set(ZXing.DecodeHintType.TRY_HARDER, true);
      zxingReader = new ZXing.MultiFormatReader();
      zxingReader.setHints(hints);
    }
    var source = new ZXing.HTMLCanvasElementLuminanceSource(canvas);
    var bitmap = new ZXing.BinaryBitmap(new ZXing.HybridBinarizer(source));
    try {
      return zxingReader.decodeWithState(bitmap).getText();
    } catch (e) {
      return null;  // NotFoundException and friends: nothing readable in this frame
    } finally {
      zxingReader.reset();
    }
  }

  /* Decode one still image (a canvas): resolves the text or null. */
  function decodeCanvas(canvas) {
    return nativeDetector().then(function (detector) {
      if (detector) {
        return detector.detect(canvas).then(function (codes) { return codes.length ? codes[0].rawValue : null; });
      }
      return loadZxing().then(function (ZXing) { return zxingDecode(ZXing, canvas); });
    });
  }

  function start(video, onCode, onError) {
    var stopped = false;
    var stream = null;
    var timer = null;
    var canvas = document.createElement("canvas");
    var context = canvas.getContext("2d", { willReadFrequently: true });

    function stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (stream) stream.getTracks().forEach(function (track) { track.stop(); });
      video.srcObject = null;
      video.hidden = true;
    }

    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      onError(new Error("This browser gives the page no camera (it needs https, or localhost)."));
      return stop;
    }
    Promise.all([
      navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false }),
      nativeDetector()
    ]).then(function (results) {
      stream = results[0];
      var detector = results[1];
      if (stopped) { stop(); return; }
      video.srcObject = stream;
      video.hidden = false;
      video.setAttribute("playsinline", "");
      video.muted = true;
      return video.play().then(function () {
        return detector ? null : loadZxing();
      }).then(function (ZXing) {
        function tick() {
          if (stopped) return;
          if (!video.videoWidth) { timer = setTimeout(tick, INTERVAL_MS); return; }
          var found;
          if (detector) {
            found = detector.detect(video).then(function (codes) { return codes.length ? codes[0].rawValue : null; });
          } else {
            canvas.width = video.videoWidth;
            canvas.height = video.videoHeight;
            context.drawImage(video, 0, 0, canvas.width, canvas.height);
            found = Promise.resolve(zxingDecode(ZXing, canvas));
          }
          found.then(function (value) {
            if (stopped) return;
            if (value) { stop(); onCode(value); } else { timer = setTimeout(tick, INTERVAL_MS); }
          }, function () { timer = setTimeout(tick, INTERVAL_MS); });
        }
        tick();
      });
    }).catch(function (error) {
      stop();
      onError(error);
    });
    return stop;
  }

  window.FloorCamera = {
    start: start, decodeCanvas: decodeCanvas, loadZxing: loadZxing, forceZxing: false,
    usesNativeDetector: function () { return nativeDetector().then(function (d) { return !!d; }); }
  };
})();
