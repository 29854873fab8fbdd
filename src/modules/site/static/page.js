// The page runtime's script: measures one visit and reports it to the page's own origin.
// No cookies, no storage, no third-party code. What it measures and how: docs/pages-runtime.md.
(function () {
  'use strict';
  var meta = document.querySelector('meta[name="ap-view"]');
  // Global Privacy Control: the visit is not recorded at all.
  if (!meta || navigator.globalPrivacyControl === true || window.audiencePages) return;

  var ENDPOINT = '/_ap/collect';
  var IDLE_MS = 30 * 60 * 1000; // a session ends after 30 minutes without activity
  var HEARTBEAT_MS = 15 * 1000;
  var view = meta.getAttribute('content');
  var session = null;
  var lastInput = Date.now();
  var lastTick = Date.now();

  function visible() {
    return document.visibilityState === 'visible';
  }

  // Deepest point of the page seen, as a percentage of its height (100 when it fits the window).
  function depth() {
    var doc = document.documentElement;
    var height = Math.max(doc.scrollHeight, document.body ? document.body.scrollHeight : 0);
    if (height <= 0) return 100;
    var seen = (window.scrollY || doc.scrollTop || 0) + window.innerHeight;
    return Math.max(0, Math.min(100, Math.round((seen / height) * 100)));
  }

  function post(body, beacon) {
    var json = JSON.stringify(body);
    if (beacon && navigator.sendBeacon) {
      try {
        if (navigator.sendBeacon(ENDPOINT, json)) return null;
      } catch {
        // fall back to fetch
      }
    }
    return fetch(ENDPOINT, {
      method: 'POST',
      body: json,
      keepalive: true,
      credentials: 'omit',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
    }).catch(function () {
      return null;
    });
  }

  function start() {
    var s = {
      token: null,
      off: false,
      ready: null,
      engagedMs: 0,
      scroll: depth(),
      clicks: 0,
      conversion: false,
      sent: '',
    };
    session = s;
    var request = post({ t: 'start', v: view, u: location.href }, false);
    s.ready = (request || Promise.resolve(null))
      .then(function (res) {
        return res && res.status === 201 ? res.json() : null;
      })
      .then(function (body) {
        if (body && typeof body.s === 'string') s.token = body.s;
        else s.off = true; // not recorded (a crawler, a limit): send nothing more
      })
      .catch(function () {
        s.off = true;
      });
  }

  function snapshot(s) {
    return { t: 'update', s: s.token, e: Math.round(s.engagedMs / 1000), d: s.scroll, c: s.clicks, x: s.conversion };
  }

  // Reports the session's totals (the server keeps the maxima, so repeats and reordering are harmless).
  function report(beacon) {
    var s = session;
    if (!s || s.off) return;
    if (!s.token) {
      if (!beacon)
        s.ready.then(function () {
          if (s.token) report(false);
        });
      return;
    }
    var body = snapshot(s);
    var key = JSON.stringify(body);
    if (key === s.sent) return;
    s.sent = key;
    var request = post(body, beacon);
    if (request) {
      request.then(function (res) {
        // 409: the server ended the session (30 minutes without activity): the next activity starts a new one.
        if (res && res.status === 409 && session === s) s.off = true;
      });
    }
  }

  // Engaged time: counted only while the tab is visible and the visitor was active in the last 30 minutes.
  function tick() {
    var now = Date.now();
    var delta = Math.min(now - lastTick, 2000);
    lastTick = now;
    if (session && visible() && now - lastInput < IDLE_MS) session.engagedMs += delta;
  }

  function activity() {
    var now = Date.now();
    tick();
    if (now - lastInput >= IDLE_MS || (session && session.off && session.token)) start();
    lastInput = now;
  }

  start();
  setInterval(tick, 1000);
  setInterval(function () {
    if (visible()) report(false);
  }, HEARTBEAT_MS);

  addEventListener(
    'scroll',
    function () {
      activity();
      var d = depth();
      if (session && d > session.scroll) session.scroll = d;
    },
    { passive: true },
  );
  ['pointerdown', 'keydown', 'touchstart', 'wheel'].forEach(function (type) {
    addEventListener(type, activity, { passive: true, capture: true });
  });
  document.addEventListener(
    'click',
    function (event) {
      activity();
      if (!session) return;
      session.clicks += 1;
      var target = event.target;
      var action = target && target.closest ? target.closest('[data-ap-action]') : null;
      if (action) {
        session.conversion = true; // a click on one of the page's actions
        report(true);
      }
    },
    true,
  );
  document.addEventListener('visibilitychange', function () {
    tick();
    if (visible()) activity();
    else report(true);
  });
  addEventListener('pagehide', function () {
    tick();
    report(true);
  });
  addEventListener('pageshow', function (event) {
    if (event.persisted) activity(); // back from the back/forward cache
  });

  // For the page's other features (forms): the current session, if the visit is recorded.
  window.audiencePages = {
    sessionToken: function () {
      return session && !session.off ? session.token : null;
    },
  };
})();

// Forms on the page (docs/forms.md): without this script they post normally; with it they send
// JSON with fetch and show the answer in place, with the per-view token (the idempotency key), the
// form stamp (asked for when the form comes into view: the service counts the minimum fill time
// from it) and the session (when the visit is recorded). Runs with Global Privacy Control too:
// sending a form is the visitor's own act.
(function () {
  'use strict';
  var forms = document.querySelectorAll('form[data-ap-form]');
  if (!forms.length || !window.fetch || !window.JSON) return;

  function field(form, name) {
    return form.elements.namedItem(name);
  }

  function clearErrors(form) {
    Array.prototype.forEach.call(form.querySelectorAll('.ap-field-error'), function (p) {
      p.hidden = true;
      p.textContent = '';
    });
    Array.prototype.forEach.call(form.querySelectorAll('[aria-invalid]'), function (input) {
      input.removeAttribute('aria-invalid');
      var hint = document.getElementById(input.id + '-hint');
      if (hint) input.setAttribute('aria-describedby', hint.id);
      else input.removeAttribute('aria-describedby');
    });
  }

  function showErrors(form, problem) {
    clearErrors(form);
    var summary = form.querySelector('.ap-form-summary');
    var errors = (problem && problem.errors) || [];
    var list = document.createElement('ul');
    errors.forEach(function (error) {
      var name = String(error.path || '').replace('/body/', '');
      var input = field(form, name);
      if (!input || !input.id) return;
      var p = document.getElementById(input.id + '-error');
      if (p) {
        p.textContent = error.message;
        p.hidden = false;
        var hint = document.getElementById(input.id + '-hint');
        input.setAttribute('aria-describedby', (hint ? hint.id + ' ' : '') + p.id);
      }
      input.setAttribute('aria-invalid', 'true');
      var li = document.createElement('li');
      var a = document.createElement('a');
      a.href = '#' + input.id;
      a.textContent = error.message;
      li.appendChild(a);
      list.appendChild(li);
    });
    var title = document.createElement('p');
    title.className = 'ap-form-summary-title';
    title.textContent = errors.length
      ? 'Please correct the following and send again:'
      : (problem && problem.detail) || 'The form could not be sent. Please check your connection and try again.';
    summary.textContent = '';
    summary.appendChild(title);
    if (errors.length) summary.appendChild(list);
    summary.hidden = false;
    summary.focus();
  }

  // The service's answer when a form comes sooner than its minimum fill time: wait, send again once.
  var MAX_WAIT_MS = 10000;

  function setup(form) {
    var box = form.parentNode;
    var asked = false;
    var token = field(form, 'ap_token');
    var stamp = field(form, 'ap_stamp');
    if (token && window.crypto && window.crypto.randomUUID) token.value = window.crypto.randomUUID();

    function askStamp() {
      if (asked || !stamp) return;
      asked = true;
      fetch('/_ap/form-stamp', { credentials: 'same-origin', headers: { accept: 'application/json' } })
        .then(function (res) {
          return res.ok ? res.json() : null;
        })
        .then(
          function (body) {
            if (body && typeof body.stamp === 'string' && !stamp.value) stamp.value = body.stamp;
          },
          function () {},
        );
    }
    if ('IntersectionObserver' in window) {
      var observer = new window.IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (entry.isIntersecting) {
            askStamp();
            observer.disconnect();
          }
        });
      });
      observer.observe(form);
    } else {
      askStamp();
    }

    function done(button) {
      if (button) button.disabled = false;
      form.removeAttribute('aria-busy');
    }

    function send(data, button, retried) {
      fetch(form.action.split('#')[0], {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(data),
      })
        .then(function (res) {
          return res
            .json()
            .catch(function () {
              return null;
            })
            .then(function (body) {
              return { ok: res.status === 200 || res.status === 201, body: body };
            });
        })
        .then(
          function (result) {
            var body = result.body;
            if (!result.ok && !retried && body && body.code === 'form_too_fast' && typeof body.stamp === 'string') {
              data.ap_stamp = body.stamp;
              if (stamp) stamp.value = body.stamp;
              var wait = Math.min(MAX_WAIT_MS, Math.max(0, Number(body.retryAfterMs) || 0));
              return window.setTimeout(function () {
                send(data, button, true);
              }, wait);
            }
            done(button);
            if (!result.ok) return showErrors(form, body);
            var sent = box.querySelector('.ap-form-sent');
            form.hidden = true;
            if (sent) {
              sent.classList.add('ap-form-sent--shown');
              sent.focus();
            }
          },
          function () {
            done(button);
            showErrors(form, null);
          },
        );
    }

    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var button = form.querySelector('button[type="submit"]');
      if (button && button.disabled) return; // a double click sends once (and the token makes it once anyway)
      var data = {};
      Array.prototype.forEach.call(form.elements, function (el) {
        if (el.name) data[el.name] = el.value;
      });
      var pages = window.audiencePages;
      var session = pages && pages.sessionToken ? pages.sessionToken() : null;
      if (session) data.ap_session = session;
      if (button) button.disabled = true;
      form.setAttribute('aria-busy', 'true');
      send(data, button, false);
    });
  }

  Array.prototype.forEach.call(forms, setup);
})();

// The on-page agent (docs/agent.md): without this script its form posts and an answer page comes
// back; with it, questions and streamed answers appear in the conversation region (aria-live).
// Everything shown is text (textContent), never markup; links only to the page's own action.
(function () {
  'use strict';
  var form = document.querySelector('form[data-ap-agent]');
  var log = document.getElementById('ap-agent-log');
  if (!form || !log || !window.fetch || !window.TextDecoder) return;
  var Decoder = window.TextDecoder;
  var input = form.elements.namedItem('q');
  var button = form.querySelector('button[type="submit"]');
  var view = form.elements.namedItem('v').value;

  function bubble(role, text) {
    var p = document.createElement('p');
    p.className = 'ap-agent-msg ap-agent-msg--' + role;
    var who = document.createElement('span');
    who.className = 'ap-visually-hidden';
    who.textContent = role === 'visitor' ? 'You asked: ' : 'Answer: ';
    p.appendChild(who);
    var body = document.createElement('span');
    body.textContent = text;
    p.appendChild(body);
    log.appendChild(p);
    return { p: p, body: body };
  }

  function finish(msg, done) {
    // the whole answer as stored: it replaces what streamed (a model's answer given up half-way)
    if (typeof done.text === 'string') msg.body.textContent = done.text;
    if (done.sources && done.sources.length) {
      var src = document.createElement('span');
      src.className = 'ap-agent-sources';
      src.textContent =
        'Source: ' +
        done.sources
          .map(function (s) {
            return s.label;
          })
          .join('; ');
      msg.p.appendChild(src);
    }
    if (done.action && done.action.href && /^(https?:|mailto:|tel:|\/(?!\/))/.test(done.action.href)) {
      var a = document.createElement('a');
      a.className = 'ap-button ap-agent-action';
      a.href = done.action.href;
      a.textContent = done.action.title;
      msg.p.appendChild(a);
    }
  }

  form.addEventListener('submit', function (event) {
    var question = (input.value || '').trim();
    if (!question) return;
    event.preventDefault();
    button.disabled = true;
    bubble('visitor', question);
    var msg = bubble('agent', '');
    msg.p.setAttribute('aria-busy', 'true');
    var token = window.audiencePages ? window.audiencePages.sessionToken() : null;
    fetch('/_ap/ask', {
      method: 'POST',
      credentials: 'omit',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ v: view, q: question, s: token }),
    })
      .then(function (res) {
        if (!res.ok || !res.body) {
          return res
            .json()
            .catch(function () {
              return null;
            })
            .then(function (problem) {
              msg.body.textContent =
                (problem && problem.detail) || 'The question could not be sent. Please try again in a moment.';
            });
        }
        var reader = res.body.getReader();
        var decoder = new Decoder();
        var buffered = '';
        var pump = function () {
          return reader.read().then(function (chunk) {
            if (chunk.done) return;
            buffered += decoder.decode(chunk.value, { stream: true });
            var lines = buffered.split('\n');
            buffered = lines.pop();
            lines.forEach(function (line) {
              if (!line) return;
              var item = JSON.parse(line);
              if (item.t === 'text') msg.body.textContent += item.v;
              else if (item.t === 'done') finish(msg, item);
            });
            return pump();
          });
        };
        return pump();
      })
      .catch(function () {
        msg.body.textContent = 'The question could not be sent. Please check your connection and try again.';
      })
      .then(function () {
        msg.p.removeAttribute('aria-busy');
        button.disabled = false;
        input.value = '';
        input.focus();
      });
  });
})();
