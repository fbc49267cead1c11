// The report's behaviour: the finding filters (accepted findings hidden until asked for), opening every
// section for printing, and a self-check that counts what was drawn against the embedded data. The
// page works without it: every section is in the HTML, accepted findings hidden.
(function () {
  'use strict';
  var guard = window.gpuTrustGuard || { errors: [], violations: [] };
  var SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'];
  var RANK = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };

  function all(selector, root) {
    return Array.prototype.slice.call((root || document).querySelectorAll(selector));
  }
  function one(selector, root) {
    return (root || document).querySelector(selector);
  }
  function tokens(el, name) {
    var v = el.getAttribute(name) || '';
    return v === '' ? [] : v.split(' ');
  }

  // Filters.
  var form = one('#filters');
  function applyFilters() {
    if (!form) {
      return;
    }
    var tenant = one('#filter-tenant').value;
    var layer = one('#filter-layer').value;
    var floor = RANK[one('#filter-severity').value] || 0;
    var showAccepted = one('#filter-accepted').checked;
    var shown = 0;
    var findings = all('article.finding');
    findings.forEach(function (f) {
      var ok = (tenant === '' || tokens(f, 'data-tenants').indexOf(tenant) >= 0) &&
        (layer === '' || f.getAttribute('data-layer') === layer) &&
        (RANK[f.getAttribute('data-severity')] || 0) >= floor &&
        (showAccepted || f.getAttribute('data-accepted') !== 'true');
      f.hidden = !ok;
      if (ok) {
        shown += 1;
      }
    });
    all('section.layer').forEach(function (s) {
      var visible = all('article.finding', s).filter(function (f) { return !f.hidden; }).length;
      s.hidden = visible === 0;
      var count = one('.layer-count', s);
      if (count) {
        count.textContent = '(' + visible + ')';
      }
    });
    all('.node').forEach(function (n) {
      n.hidden = tenant !== '' && tokens(n, 'data-tenants').indexOf(tenant) < 0;
    });
    // A tenant's rows, and the rows the findings shown link to (a group of a finding may hold
    // other tenants than the one chosen): a link never lands on a hidden row.
    var linked = {};
    findings.forEach(function (f) {
      if (!f.hidden) {
        all('a[href^="#"]', f).forEach(function (a) { linked[a.getAttribute('href').slice(1)] = true; });
      }
    });
    all('tr.pair, tr.listed-node, tr.group, tr.glance').forEach(function (row) {
      row.hidden = tenant !== '' && tokens(row, 'data-tenants').indexOf(tenant) < 0 && !linked[row.id];
    });
    all('svg.gpu [data-tenant], li[data-tenant]').forEach(function (el) {
      el.classList.toggle('dim', tenant !== '' && el.getAttribute('data-tenant') !== tenant);
    });
    // The selected tenant's row and column in the matrix (headers carry the ids, cells their position).
    all('table.matrix').forEach(function (table) {
      var columns = all('thead th', table).map(function (th) { return th.getAttribute('data-col'); });
      all('tbody tr', table).forEach(function (row) {
        var header = one('th', row);
        var inRow = tenant !== '' && header.getAttribute('data-row') === tenant;
        header.classList.toggle('hl', inRow);
        all('td', row).forEach(function (td) {
          td.classList.toggle('hl', inRow || (tenant !== '' && columns[td.cellIndex] === tenant));
        });
      });
      all('thead th', table).forEach(function (th) {
        th.classList.toggle('hl', tenant !== '' && th.getAttribute('data-col') === tenant);
      });
    });
    var status = one('#filter-status');
    if (status) {
      var hiddenAccepted = showAccepted ? 0 : all('article.finding[data-accepted="true"]').length;
      var picked = one('#filter-tenant').selectedOptions[0];
      var beyond = tenant === '' || !picked ? 0 : Number(picked.getAttribute('data-beyond') || 0);
      status.textContent = 'Showing ' + shown + ' of ' + findings.length + ' findings' +
        (hiddenAccepted > 0 ? ' (accepted ones hidden)' : '') +
        (beyond > 0 ? '; this page does not hold ' + beyond + ' more ' +
          (beyond === 1 ? 'finding' : 'findings') + ' of this tenant (past the limit per rule): ' +
          'the JSON report lists them' : '');
    }
  }
  if (form) {
    form.addEventListener('change', applyFilters);
    form.addEventListener('input', applyFilters);
    form.addEventListener('submit', function (e) { e.preventDefault(); });
    form.addEventListener('reset', function () { window.setTimeout(applyFilters, 0); });
    applyFilters();
  }

  // A link within the page (About GTxxx, a group, a matrix cell's pair) opens the collapsed sections
  // around its target, and shows a row the filters hid, so that it lands on what it names.
  function reveal(id) {
    var el = id ? document.getElementById(id) : null;
    if (el && el.hidden) {
      el.hidden = false;
    }
    for (; el; el = el.parentElement) {
      if (el.tagName === 'DETAILS') {
        el.open = true;
      }
    }
  }
  document.addEventListener('click', function (e) {
    var a = e.target && e.target.closest ? e.target.closest('a[href^="#"]') : null;
    if (a) {
      reveal(decodeURIComponent(a.getAttribute('href').slice(1)));
    }
  });
  window.addEventListener('hashchange', function () {
    reveal(decodeURIComponent(window.location.hash.slice(1)));
  });
  reveal(decodeURIComponent(window.location.hash.slice(1)));

  // Printing: open every collapsed section, and close them again afterwards.
  var reopened = [];
  window.addEventListener('beforeprint', function () {
    reopened = all('details:not([open])');
    reopened.forEach(function (d) { d.open = true; });
  });
  window.addEventListener('afterprint', function () {
    reopened.forEach(function (d) { d.open = false; });
    reopened = [];
  });

  // Self-check: what the page drew, against what the report and layout say it should show.
  function counted() {
    var bySeverity = {};
    SEVERITIES.forEach(function (s) {
      bySeverity[s] = all('article.finding[data-severity="' + s + '"][data-accepted="false"]').length;
    });
    return {
      findings: all('article.finding').length,
      accepted: all('article.finding[data-accepted="true"]').length,
      bySeverity: bySeverity,
      matrixCells: all('table.matrix td.cell').length,
      nodes: all('.node').length,
      gpus: all('svg.gpu').length,
      migSlices: all('svg.gpu .mig-slice').length,
      pairs: all('tr.pair').length,
      groups: all('tr.group').length
    };
  }
  var out = one('#self-check');
  var result = null;
  function writeResult() {
    if (!out || !result) {
      return;
    }
    result.errors = guard.errors.slice();
    result.violations = guard.violations.slice();
    result.ok = result.mismatches.length === 0 && result.errors.length === 0 && result.violations.length === 0;
    out.setAttribute('data-ok', result.ok ? 'true' : 'false');
    out.textContent = JSON.stringify(result);
  }
  try {
    var data = JSON.parse(one('#gpu-trust-data').textContent);
    var want = data.expect;
    var got = counted();
    var mismatches = [];
    Object.keys(want).forEach(function (k) {
      if (JSON.stringify(want[k]) !== JSON.stringify(got[k])) {
        mismatches.push(k);
      }
    });
    result = { counts: got, expected: want, mismatches: mismatches };
  } catch (e) {
    guard.errors.push('self-check: ' + String(e && e.message ? e.message : e));
    result = { counts: null, expected: null, mismatches: ['self-check'] };
  }
  guard.changed = writeResult;
  writeResult();
})();
