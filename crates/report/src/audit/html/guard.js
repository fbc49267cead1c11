// Runs first: records script errors, console errors and blocked requests, so that the page can state in
// its self-check that it ran cleanly and asked the network for nothing.
(function () {
  'use strict';
  var g = { errors: [], violations: [], changed: null };
  window.gpuTrustGuard = g;
  function note() {
    if (typeof g.changed === 'function') {
      g.changed();
    }
  }
  window.addEventListener('error', function (e) {
    var what = e && e.message ? e.message : (e && e.target && e.target.tagName ? 'failed to load ' + e.target.tagName : 'error');
    g.errors.push(String(what));
    note();
  }, true);
  window.addEventListener('unhandledrejection', function (e) {
    g.errors.push('unhandled rejection: ' + String(e && e.reason));
    note();
  });
  document.addEventListener('securitypolicyviolation', function (e) {
    g.violations.push(String(e.effectiveDirective || e.violatedDirective) + ' ' + String(e.blockedURI));
    note();
  });
  var consoleError = console.error;
  console.error = function () {
    g.errors.push(Array.prototype.map.call(arguments, String).join(' '));
    note();
    return consoleError.apply(console, arguments);
  };
})();
