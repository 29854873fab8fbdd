// The console's small islands of script: copy buttons and confirmations. Everything works without it.
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
})();
