// The console's small islands of script: copy buttons, confirmations and an import's progress.
// Everything works without it.
(function () {
  'use strict';
  document.addEventListener('click', function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    var copy = target.closest('[data-copy]');
    if (copy && navigator.clipboard) {
      event.preventDefault();
      navigator.clipboard.writeText(copy.getAttribute('data-copy') || '').then(function () {
        var was = copy.textContent;
        copy.textContent = 'Copied';
        setTimeout(function () {
          copy.textContent = was;
        }, 1500);
      });
    }
  });
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    var question = form.getAttribute('data-confirm');
    if (question && !window.confirm(question)) {
      event.preventDefault();
      return;
    }
    // A long form (the import) says it is working; its button cannot send it twice.
    var busy = form.getAttribute('data-busy');
    if (busy) {
      var status = form.querySelector('.busy');
      if (status) status.textContent = busy;
      var button = form.querySelector('button[type="submit"]');
      if (button) {
        setTimeout(function () {
          button.disabled = true;
        }, 0);
      }
    }
  });

  // An import's screen while it runs: its counts from `…/status` every second (the same session's
  // tenant); when it ends, the screen is loaded again for its summary. Without script, a meta refresh.
  var live = document.querySelector('[data-import-status]');
  if (live) {
    var url = live.getAttribute('data-import-status');
    var bar = live.querySelector('progress');
    var text = live.querySelector('[data-progress-text]');
    var poll = function () {
      fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(function (response) {
          return response.ok ? response.json() : null;
        })
        .then(function (status) {
          if (status === null) return setTimeout(poll, 3000);
          if (status.status === 'done' || status.status === 'failed') return window.location.reload();
          ['done', 'created', 'existing', 'failed'].forEach(function (field) {
            var cell = live.querySelector('[data-count="' + field + '"]');
            if (cell) {
              cell.textContent = String(status[field]);
              cell.setAttribute('data-value', String(status[field]));
            }
          });
          var title = document.querySelector('h1[data-running-title]');
          if (status.status === 'running' && title) title.textContent = title.getAttribute('data-running-title');
          if (status.rows !== null && bar) {
            bar.max = status.rows;
            bar.value = status.done;
            if (text) text.textContent = status.done + ' of ' + status.rows + ' rows';
          }
          setTimeout(poll, 1000);
        })
        .catch(function () {
          setTimeout(poll, 3000);
        });
    };
    setTimeout(poll, 1000);
  }
})();
