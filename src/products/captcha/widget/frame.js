/* seclookup captcha: the widget inside its iframe (served from the API origin, strict CSP: no
 * inline code or style; styles set through CSSOM only). Talks to the API by same-origin fetch
 * and to the page (api.js) by postMessage, to and from the page origin only. PROTOCOL.md. */
(function () {
  'use strict';
  var I18N = {
    en: {
      human: 'I am human',
      verifying: 'Verifying…',
      working: 'Verifying… {n}%',
      done: 'Verified',
      slide: 'Drag the piece into the outlined slot, or use the arrow keys, then Enter.',
      again: 'Not quite. Try again.',
      renew: 'That puzzle expired; here is a new one.',
      where: 'Piece at {n}, slot at {t}',
      need: 'Click to verify.',
      expired: 'Expired. Click to verify again.',
      piece: 'Puzzle piece',
      progress: 'Verification progress',
      e_domain: 'This website is not allowed to use this captcha ({code}).',
      e_key: 'This captcha is misconfigured ({code}).',
      e_net: 'Network error. Click to try again.',
      e_rate: 'Too many attempts. Wait a moment, then click to try again.',
      e_wait: 'Too many attempts. You can try again in {n} s.',
      e_gen: 'Verification failed ({code}). Click to try again.',
    },
    fr: {
      human: 'Je suis humain',
      verifying: 'Vérification…',
      working: 'Vérification… {n} %',
      done: 'Vérifié',
      slide: 'Faites glisser la pièce dans l’emplacement, ou utilisez les flèches puis Entrée.',
      again: 'Pas tout à fait. Réessayez.',
      renew: 'Ce puzzle a expiré ; en voici un nouveau.',
      where: 'Pièce à {n}, emplacement à {t}',
      need: 'Cliquez pour vérifier.',
      expired: 'Expiré. Cliquez pour vérifier à nouveau.',
      piece: 'Pièce du puzzle',
      progress: 'Progression de la vérification',
      e_domain: 'Ce site n’est pas autorisé à utiliser ce captcha ({code}).',
      e_key: 'Ce captcha est mal configuré ({code}).',
      e_net: 'Erreur réseau. Cliquez pour réessayer.',
      e_rate: 'Trop de tentatives. Patientez un instant, puis cliquez pour réessayer.',
      e_wait: 'Trop de tentatives. Vous pourrez réessayer dans {n} s.',
      e_gen: 'Échec de la vérification ({code}). Cliquez pour réessayer.',
    },
    de: {
      human: 'Ich bin ein Mensch',
      verifying: 'Wird überprüft…',
      working: 'Wird überprüft… {n} %',
      done: 'Verifiziert',
      slide: 'Ziehen Sie das Teil in die markierte Lücke oder nutzen Sie die Pfeiltasten, dann die Eingabetaste.',
      again: 'Nicht ganz. Bitte erneut versuchen.',
      renew: 'Dieses Rätsel ist abgelaufen; hier ist ein neues.',
      where: 'Teil bei {n}, Lücke bei {t}',
      need: 'Zum Überprüfen klicken.',
      expired: 'Abgelaufen. Zum erneuten Überprüfen klicken.',
      piece: 'Puzzleteil',
      progress: 'Fortschritt der Überprüfung',
      e_domain: 'Diese Website darf dieses Captcha nicht verwenden ({code}).',
      e_key: 'Dieses Captcha ist falsch konfiguriert ({code}).',
      e_net: 'Netzwerkfehler. Zum erneuten Versuchen klicken.',
      e_rate: 'Zu viele Versuche. Bitte kurz warten, dann erneut klicken.',
      e_wait: 'Zu viele Versuche. Ein neuer Versuch ist in {n} s möglich.',
      e_gen: 'Überprüfung fehlgeschlagen ({code}). Zum erneuten Versuchen klicken.',
    },
    es: {
      human: 'Soy humano',
      verifying: 'Verificando…',
      working: 'Verificando… {n} %',
      done: 'Verificado',
      slide: 'Arrastra la pieza al hueco marcado, o usa las flechas y luego Intro.',
      again: 'Casi. Inténtalo de nuevo.',
      renew: 'Ese puzle ha caducado; aquí tienes uno nuevo.',
      where: 'Pieza en {n}, hueco en {t}',
      need: 'Haz clic para verificar.',
      expired: 'Caducado. Haz clic para verificar de nuevo.',
      piece: 'Pieza del puzle',
      progress: 'Progreso de la verificación',
      e_domain: 'Este sitio web no está autorizado a usar este captcha ({code}).',
      e_key: 'Este captcha está mal configurado ({code}).',
      e_net: 'Error de red. Haz clic para intentarlo de nuevo.',
      e_rate: 'Demasiados intentos. Espera un momento y haz clic para intentarlo de nuevo.',
      e_wait: 'Demasiados intentos. Podrás intentarlo de nuevo en {n} s.',
      e_gen: 'La verificación ha fallado ({code}). Haz clic para intentarlo de nuevo.',
    },
  };
  // An API that has not answered after this long is a network error (not retried: a click is).
  var TIMEOUT_MS = 15000;
  var ERRORS = {
    domain_not_allowed: 'e_domain',
    domain_not_configured: 'e_domain',
    domain_required: 'e_domain',
    invalid_embed: 'e_domain',
    origin_mismatch: 'e_key',
    missing_credentials: 'e_key',
    invalid_api_key: 'e_key',
    wrong_key_type: 'e_key',
    ip_not_allowed: 'e_domain',
    network_error: 'e_net',
    server_error: 'e_net',
    rate_limit_exceeded: 'e_rate',
    quota_exceeded: 'e_rate',
  };

  var q = new URLSearchParams(location.hash.slice(1));
  var P = {
    id: q.get('id') || '',
    sitekey: q.get('sitekey') || '',
    host: q.get('host') || '',
    origin: q.get('origin') || '',
    api: q.get('api') || '',
    action: q.get('action') || '',
    mode: q.get('mode') === 'managed' ? 'managed' : 'puzzle',
    pt: /^(pow|slider|random)$/.test(q.get('pt')) ? q.get('pt') : 'pow',
  };
  var V = encodeURIComponent(new URLSearchParams(location.search).get('v') || '');
  var theme = /^(light|dark|auto)$/.test(q.get('theme')) ? q.get('theme') : 'auto';
  var lang = I18N[q.get('lang')] ? q.get('lang') : 'en';
  var T = I18N[lang];
  var t0 = Number(q.get('t'));
  if (!(t0 > 0 && t0 <= Date.now())) t0 = Date.now();

  var $ = function (id) {
    return document.getElementById(id);
  };
  var w = $('w'),
    cb = $('cb'),
    st = $('st'),
    pg = $('pg'),
    bar = $('bar'),
    sl = $('sl'),
    tr = $('tr'),
    no = $('no'),
    pc = $('pc');
  var state = 'idle',
    run = 0,
    attempts = 0,
    worker = null,
    moves = 0,
    keys = 0,
    lastQuarter = -1,
    lastSize = '',
    hold = false;
  var sc = null,
    x = 0,
    drag = null,
    trace = [],
    ktrace = [],
    kt0 = 0;

  document.documentElement.className = theme;
  document.documentElement.lang = lang;
  $('lbl').textContent = T.human;
  pg.setAttribute('aria-label', T.progress);
  pc.setAttribute('aria-label', T.piece);

  var originOk = /^https?:\/\/[^/?#]+$/.test(P.origin) && window.parent !== window;
  if (originOk) {
    try {
      originOk = new URL(P.origin).hostname === P.host;
    } catch (e) {
      originOk = false;
    }
    var anc = location.ancestorOrigins;
    if (anc && anc.length && anc[0] !== P.origin) originOk = false;
  }
  // Why this frame refuses to work, if it does: a foreign embedder, or a page that expects the
  // frame at another origin (api.js's URL redirected here) and would drop every message from it.
  var refused = !originOk ? 'invalid_embed' : P.api && P.api !== location.origin ? 'origin_mismatch' : '';

  function post(type, extra) {
    if (!originOk) return;
    var m = { seclookup: 'captcha', id: P.id, type: type };
    for (var k in extra) m[k] = extra[k];
    window.parent.postMessage(m, P.origin);
  }

  function fmt(s, v) {
    return s.replace('{n}', v).replace('{code}', v);
  }

  function say(text) {
    if (st.textContent !== text) st.textContent = text;
  }

  /** The visible state: the box (spinner, tick, error), the checkbox, the progress bar, the slider. */
  function show(s, text) {
    state = s;
    w.className = 'w' + (s === 'busy' ? ' busy' : s === 'ok' ? ' ok' : s === 'err' ? ' err' : '');
    w.setAttribute('aria-busy', s === 'busy' ? 'true' : 'false');
    cb.setAttribute('aria-checked', s === 'ok' ? 'true' : 'false');
    if (s !== 'busy') pg.hidden = true;
    if (s !== 'slider') sl.hidden = true;
    if (text !== undefined) say(text);
    size();
  }

  function size() {
    var need = Math.ceil(w.getBoundingClientRect().height),
      wide = sc ? sc.width + 22 : 0;
    var key = need + 'x' + wide;
    if (key !== lastSize) {
      lastSize = key;
      post('size', { h: need, w: wide });
    }
  }

  function telemetry() {
    var n = navigator,
      tz = '';
    try {
      tz = Intl.DateTimeFormat().resolvedOptions().timeZone || '';
    } catch (e) {
      /* old browser */
    }
    return {
      webdriver: !!n.webdriver,
      headless: /HeadlessChrome/.test(n.userAgent || ''),
      languages: (n.languages || []).length,
      plugins: n.plugins ? n.plugins.length : 0,
      touch: (n.maxTouchPoints || 0) > 0,
      screen: [screen.width, screen.height],
      pointer_moves: moves,
      keys: keys,
      focus: document.hasFocus(),
      elapsed_ms: Math.max(0, Date.now() - t0),
      timezone: tz,
    };
  }

  /** {s: status, j: JSON body, wait: a 429's Retry-After in seconds, late: timed out}; never rejects. */
  function fetchJson(method, path, body) {
    var init = { method: method, credentials: 'omit', cache: 'no-store' },
      ctl = typeof AbortController === 'function' ? new AbortController() : null,
      timer = 0;
    if (body) {
      init.headers = { 'Content-Type': 'application/json' };
      init.body = JSON.stringify(body);
    }
    if (ctl) {
      init.signal = ctl.signal;
      timer = setTimeout(function () {
        ctl.abort();
      }, TIMEOUT_MS);
    }
    function lost() {
      return { s: 0, j: { error_code: 'network_error' }, late: !!(ctl && ctl.signal.aborted) };
    }
    return fetch(new URL('../' + path, location.href).href, init)
      .then(function (r) {
        var wait = r.status === 429 ? Math.min(600, parseInt(r.headers.get('Retry-After'), 10) || 0) : 0;
        return r.json().then(
          function (j) {
            return { s: r.status, j: j || {}, wait: wait };
          },
          function () {
            return ctl && ctl.signal.aborted ? lost() : { s: r.status, j: {}, wait: wait };
          }
        );
      }, lost)
      .then(function (r) {
        clearTimeout(timer);
        return r;
      });
  }

  /** fetchJson with two retries (1 s, 2 s) on a network error or a 5xx (not after a timeout). */
  function call(my, method, path, body) {
    var tries = 0;
    function go() {
      return fetchJson(method, path, body).then(function (r) {
        if ((r.s === 0 || r.s >= 500) && !r.late && tries < 2 && my === run) {
          tries++;
          return new Promise(function (res) {
            setTimeout(res, tries * 1000);
          }).then(go);
        }
        return r;
      });
    }
    return go();
  }

  function codeOf(r) {
    return r.j.error_code || (r.s === 0 ? 'network_error' : r.s >= 500 ? 'server_error' : 'http_' + r.s);
  }

  function base(extra) {
    var b = { sitekey: P.sitekey, hostname: P.host };
    if (P.action) b.action = P.action;
    for (var k in extra) b[k] = extra[k];
    return b;
  }

  function success(proof) {
    sc = null;
    show('ok', T.done);
    post('success', { proof: proof });
  }

  /** Show the error; after a 429 with Retry-After, refuse to start again for that many seconds. */
  function fail(code, wait) {
    sc = null;
    show('err', wait > 0 ? fmt(T.e_wait, wait) : fmt(T[ERRORS[code] || 'e_gen'], code));
    if (wait > 0) {
      hold = true;
      cb.setAttribute('aria-disabled', 'true');
      setTimeout(function () {
        hold = false;
        cb.removeAttribute('aria-disabled');
        if (state === 'err') say(T.need);
      }, wait * 1000);
    }
    post('error', { code: code });
  }

  function failed(r) {
    fail(codeOf(r), r.wait);
  }

  /** Start (or restart) a verification: managed first in managed mode, else a puzzle. */
  function begin() {
    var my = ++run;
    attempts = 0;
    if (P.mode === 'managed') managed(my);
    else puzzle(my, '');
  }

  function managed(my) {
    show('busy', T.verifying);
    call(my, 'POST', 'v1/captcha/managed', base({ telemetry: telemetry() })).then(function (r) {
      if (my !== run) return;
      if (r.s === 200 && r.j.proof) success(r.j.proof);
      else if (r.s === 422) show('need', T.need);
      else failed(r);
    });
  }

  /** Fetch a challenge and show it; `note` (a slider only) says why there is a new one. */
  function puzzle(my, note) {
    show('busy', T.verifying);
    // The telemetry rides along: the risk the server sees now sets the proof of work's difficulty.
    var qs = new URLSearchParams({ sitekey: P.sitekey, hostname: P.host, puzzle_type: P.pt, telemetry: JSON.stringify(telemetry()) });
    call(my, 'GET', 'v1/captcha/challenge?' + qs).then(function (r) {
      if (my !== run) return;
      if (r.s !== 200 || !r.j.challenge) return failed(r);
      if (r.j.puzzle_type === 'slider') slider(my, r.j, note);
      else if (r.j.puzzle_type === 'pow') pow(my, r.j);
      else fail('unsupported_puzzle');
    });
  }

  function verify(my, token, tr, slid) {
    show('busy', T.verifying);
    call(my, 'POST', 'v1/captcha/verify', base({ token: token, trace: tr, telemetry: telemetry() })).then(function (r) {
      if (my !== run) return;
      if (r.s === 200 && r.j.proof) return success(r.j.proof);
      var code = codeOf(r);
      // A wrong answer, or a challenge gone stale (expired after 120 s): a new one. Only the
      // first is the visitor's doing.
      if ((code === 'challenge_failed' || code === 'invalid_token') && ++attempts < 5)
        puzzle(my, slid ? (code === 'challenge_failed' ? T.again : T.renew) : '');
      else failed(r);
    });
  }

  // ---- proof of work ----

  function progress(p) {
    var v = Math.round(p * 100),
      quarter = Math.floor(v / 25);
    pg.hidden = false;
    bar.style.width = v + '%';
    pg.setAttribute('aria-valuenow', String(v));
    if (quarter !== lastQuarter) {
      lastQuarter = quarter;
      say(fmt(T.working, v));
    }
    size();
  }

  function pow(my, ch) {
    lastQuarter = -1;
    progress(0);
    solve(my, ch.params).then(
      function (counters) {
        if (my !== run) return;
        progress(1);
        verify(my, ch.challenge + '.' + counters.join(','), [], false);
      },
      function () {
        if (my === run) fail('solver_error');
      }
    );
  }

  function solve(my, params) {
    return new Promise(function (resolve, reject) {
      var wk;
      try {
        wk = new Worker('worker.js?v=' + V);
      } catch (e) {
        return mainThread(my, params).then(resolve, reject);
      }
      worker = wk;
      var stop = function () {
        wk.terminate();
        if (worker === wk) worker = null;
      };
      wk.onmessage = function (e) {
        var m = e.data || {};
        if (my !== run) return stop();
        if (m.type === 'progress') progress(m.p);
        else if (m.type === 'done') {
          stop();
          resolve(m.counters);
        } else {
          stop();
          reject(new Error(m.message));
        }
      };
      wk.onerror = function (e) {
        if (e.preventDefault) e.preventDefault();
        stop();
        mainThread(my, params).then(resolve, reject);
      };
      wk.postMessage(params);
    });
  }

  /** No Worker: the same solver (worker.js as a plain script), in slices between frames. */
  function mainThread(my, params) {
    return new Promise(function (resolve, reject) {
      if (window.seclookupPow) return resolve(window.seclookupPow);
      var s = document.createElement('script');
      s.src = 'worker.js?v=' + V;
      s.onload = function () {
        if (window.seclookupPow) resolve(window.seclookupPow);
        else reject(new Error('load'));
      };
      s.onerror = reject;
      document.head.appendChild(s);
    }).then(function (pw) {
      var stt = pw.createSolver(params);
      return new Promise(function (resolve, reject) {
        (function tick() {
          if (my !== run) return;
          try {
            if (pw.step(stt, 4096)) return resolve(stt.counters);
          } catch (e) {
            return reject(e);
          }
          progress(pw.progress(stt));
          setTimeout(tick, 0);
        })();
      });
    });
  }

  // ---- slider ----

  // Positions are in the puzzle's px (params.width wide); the track shrinks to fit a narrow
  // frame (CSS max-width), so they are drawn as percentages of it.
  function slider(my, ch, note) {
    var p = ch.params || {};
    sc = { my: my, challenge: ch.challenge, width: p.width, target: p.target, max: Math.max(0, p.width - p.piece) };
    tr.style.width = p.width + 'px';
    no.style.left = pct(p.target);
    no.style.width = pct(p.piece);
    pc.style.width = pct(p.piece);
    pc.setAttribute('aria-valuemax', String(sc.max));
    x = 0;
    drag = null;
    ktrace = [];
    kt0 = 0;
    place(0);
    sl.hidden = false;
    show('slider', note ? note + ' ' + T.slide : T.slide);
    // Not when the page opened it (execute()) while the visitor is elsewhere in the page.
    if (document.hasFocus()) pc.focus();
  }

  function pct(v) {
    return (v / sc.width) * 100 + '%';
  }

  function place(nx) {
    if (!sc) return;
    x = Math.min(sc.max, Math.max(0, nx));
    pc.style.left = pct(x);
    pc.setAttribute('aria-valuenow', String(Math.round(x)));
    // The slot is drawn only: say where it is, for a screen reader (the target is in the params anyway).
    pc.setAttribute('aria-valuetext', T.where.replace('{n}', Math.round(x)).replace('{t}', sc.target));
  }

  function r1(v) {
    return Math.round(v * 10) / 10;
  }

  function submit(points) {
    var s = sc,
      final = Math.round(x);
    sc = null;
    if (document.activeElement === pc) cb.focus(); // the slider hides: keep keyboard focus in the widget
    verify(s.my, s.challenge + '.' + final, points, true);
  }

  pc.addEventListener('pointerdown', function (e) {
    if (!sc || drag || e.button > 0) return;
    e.preventDefault();
    if (pc.setPointerCapture) pc.setPointerCapture(e.pointerId);
    // k: drawn px per puzzle px (below 1 on a narrow frame).
    var k = tr.getBoundingClientRect().width / sc.width || 1;
    drag = { id: e.pointerId, k: k, x0: e.clientX - x * k, y0: e.clientY, t0: performance.now(), y: 0 };
    trace = [{ x: r1(x), y: 0, t: 0 }];
    ktrace = [];
  });
  pc.addEventListener('pointermove', function (e) {
    if (!drag || e.pointerId !== drag.id) return;
    place((e.clientX - drag.x0) / drag.k);
    drag.y = r1(e.clientY - drag.y0);
    var pt = { x: r1(x), y: drag.y, t: r1(performance.now() - drag.t0) };
    if (trace.length < 1990) trace.push(pt);
    else trace[trace.length - 1] = pt;
  });
  function release(e) {
    if (!drag || e.pointerId !== drag.id) return;
    var d = drag;
    drag = null;
    if (x < 3) return place(0);
    trace.push({ x: Math.round(x), y: d.y, t: r1(performance.now() - d.t0) });
    submit(trace);
  }
  pc.addEventListener('pointerup', release);
  pc.addEventListener('pointercancel', release);
  pc.addEventListener('keydown', function (e) {
    if (!sc || drag) return;
    var k = e.key,
      stepPx = e.shiftKey ? 20 : 4,
      nx;
    if (k === 'ArrowRight' || k === 'ArrowUp') nx = x + stepPx;
    else if (k === 'ArrowLeft' || k === 'ArrowDown') nx = x - stepPx;
    else if (k === 'Home') nx = 0;
    else if (k === 'End') nx = sc.max;
    else if (k === 'Enter' || k === ' ') {
      e.preventDefault();
      if (ktrace.length) submit(ktrace);
      return;
    } else return;
    e.preventDefault();
    place(nx);
    var now = performance.now();
    if (!kt0) kt0 = now;
    if (ktrace.length < 1990) ktrace.push({ x: Math.round(x), y: 0, t: r1(now - kt0), k: 1 });
  });

  /** Managed mode asks by itself, once the widget has been up 1 s (the server reads an answer
   * within 300 ms of render as a bot's); a click before that asks at once. */
  function autoManaged() {
    var my = run;
    setTimeout(
      function () {
        if (my === run && state === 'idle' && !hold) begin();
      },
      Math.max(0, 1000 - (Date.now() - t0))
    );
  }

  // ---- wiring ----

  document.addEventListener(
    'pointermove',
    function () {
      moves++;
    },
    true
  );
  document.addEventListener(
    'keydown',
    function () {
      keys++;
    },
    true
  );

  /** A click or execute(): start, unless refused or waiting out a 429. */
  function start() {
    if (refused || hold) return;
    if (state === 'need') puzzle(run, '');
    else if (state === 'idle' || state === 'err' || state === 'expired') begin();
  }

  cb.addEventListener('click', function () {
    if (state === 'slider') pc.focus();
    else start();
  });

  window.addEventListener('message', function (e) {
    if (e.source !== window.parent || e.origin !== P.origin || refused) return;
    var m = e.data;
    if (!m || m.seclookup !== 'captcha' || m.id !== P.id) return;
    if (m.type === 'expire' && state === 'ok') {
      show('expired', T.expired);
    } else if (m.type === 'reset') {
      run++;
      if (worker) {
        worker.terminate();
        worker = null;
      }
      sc = null;
      drag = null; // a drag under way ends here: its release has no puzzle to answer
      show('idle', '');
      if (P.mode === 'managed') autoManaged();
    } else if (m.type === 'execute') {
      start();
    }
  });

  if (window.ResizeObserver) new ResizeObserver(size).observe(w);
  if (refused) {
    show('err', fmt(T[ERRORS[refused]], refused));
    post('error', { code: refused });
  } else {
    show('idle', '');
    post('ready', {});
    if (P.mode === 'managed') autoManaged();
  }
})();
