/* seclookup captcha loader: <script src="{base}/widget/api.js" async defer></script>.
 * Renders every .seclookup-captcha[data-sitekey] (unless ?render=explicit) as an iframe from the
 * API origin, and exposes window.seclookupCaptcha. Touches the page only through DOM and CSSOM
 * (no inline styles, no injected <style>, no eval), so a strict page CSP needs only script-src
 * and frame-src for the API origin. See the README (captcha, the widget). */
(function (win, doc) {
  'use strict';
  var VERSION = '__WIDGET_VERSION__';
  var EXPIRES_MS = 300000;
  var TITLES = { en: 'Human verification', fr: 'Vérification humaine', de: 'Menschliche Überprüfung', es: 'Verificación humana' };
  var OPTIONS = [
    'sitekey',
    'action',
    'mode',
    'puzzleType',
    'callback',
    'errorCallback',
    'expiredCallback',
    'theme',
    'language',
    'responseFieldName',
    'apiBase',
  ];
  // Globals that run a string as code, or open it as a URL: never a callback, whatever a data-*-callback names.
  var EVALUATORS = /^(eval|Function|setTimeout|setInterval|setImmediate|execScript|open)$/;
  // What a callback may be handed: a proof (base64url parts joined by dots) or an error code.
  var PROOF = /^[\w-]+(?:\.[\w-]+){0,3}$/;
  var CODE = /^[a-z0-9_]{1,64}$/;
  var OWN = Object.prototype.hasOwnProperty;

  var script = doc.currentScript;
  // Markup that names an <img> "currentScript" (DOM clobbering: document's named elements shadow
  // its properties) is no script tag: its data-api-base would move the frames to its author's base.
  if (script && script.tagName !== 'SCRIPT') script = null;
  if (!script) {
    var all = doc.getElementsByTagName('script');
    for (var i = all.length - 1; i >= 0 && !script; i--) if (/\/widget\/api\.js(?:[?#]|$)/.test(all[i].src)) script = all[i];
  }
  var src = script ? script.src : '';
  // The API: the script tag's own data-api-base, else where api.js came from. Never a widget's
  // data-api-base: a sanitizer keeps data-* (never a script tag), and the frame at the API's
  // origin is the one whose messages are believed.
  var defaultBase = (script && script.getAttribute('data-api-base')) || src.replace(/\/widget\/api\.js(?:[?#].*)?$/, '');
  var query = new URLSearchParams(src.split('#')[0].split('?')[1] || '');

  // api.js loaded again (say by two plugins): the first copy's widgets and API serve; this copy
  // still honours its own render= and onload= parameters.
  // Only that copy's API counts: elements with id="seclookupCaptcha" (named access on window) are none.
  var first = win.seclookupCaptcha;
  if (first && typeof first.version === 'string' && typeof first.render === 'function') return whenReady(first.render);

  var widgets = Object.create(null); // no prototype: a message's id names nothing else
  var count = 0;

  function dashed(name) {
    return name.replace(/[A-Z]/g, function (c) {
      return '-' + c.toLowerCase();
    });
  }

  function warn(text) {
    if (win.console) console.error('seclookup captcha: ' + text);
  }

  /** A callback option: a function, or a global function's name (data-* may come from sanitized markup: never evaluated). */
  function fire(fn, arg) {
    if (typeof fn === 'string') {
      // The page's own globals only: not what window inherits ("constructor" is Window itself).
      // (Object.hasOwn is ES2022: the widget stays ES2019.)
      if (!/^[A-Za-z_$][\w$]*$/.test(fn) || EVALUATORS.test(fn) || !OWN.call(win, fn)) return warn('refused callback ' + JSON.stringify(fn));
      fn = win[fn];
    }
    if (typeof fn === 'function') fn(arg);
  }

  function language(asked) {
    var list = [asked].concat(navigator.languages || [], navigator.language || []);
    for (var i = 0; i < list.length; i++) {
      var code = String(list[i] || '')
        .slice(0, 2)
        .toLowerCase();
      if (TITLES[code]) return code;
    }
    return 'en';
  }

  /** The widget an id or its element names, in the page or not. */
  function named(id) {
    if (id && id.nodeType === 1) id = id.getAttribute('data-seclookup-widget-id');
    return (typeof id === 'string' && widgets[id]) || null;
  }

  /**
   * Still in the page? A single-page app may drop a widget without remove(): once loaded and gone,
   * it is forgotten (a proof it gave still expires, with the expired callback).
   */
  function alive(wd) {
    // isConnected: also in a shadow root (a web component's), which documentElement.contains() is not.
    if (wd.iframe.isConnected) return true;
    if (wd.ready) delete widgets[wd.id];
    return false;
  }

  /** The widget `id` names (an id or its element), or the first one still in the page. */
  function find(id) {
    if (id === undefined || id === null) {
      for (var k in widgets) if (alive(widgets[k])) return widgets[k];
      return null;
    }
    var wd = named(id);
    return wd && alive(wd) ? wd : null;
  }

  function send(wd, type) {
    if (!wd.ready) {
      wd.queue.push(type);
      return;
    }
    var frame = alive(wd) && wd.iframe.contentWindow;
    if (frame) frame.postMessage({ seclookup: 'captcha', id: wd.id, type: type }, wd.origin);
  }

  function reset(wd) {
    setProof(wd, '');
    send(wd, 'reset');
  }

  /** The API base URL; '' unless http(s): a javascript: or data: iframe src would run as the page. */
  function apiBase(value) {
    var url;
    try {
      url = new URL(String(value), location.href);
    } catch (e) {
      return '';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return '';
    return url.href.replace(/[?#].*$/, '').replace(/\/+$/, '');
  }

  function setProof(wd, proof) {
    clearTimeout(wd.timer);
    wd.proof = proof;
    wd.expired = false;
    wd.input.value = proof;
  }

  /** render(element or selector, options) -> widget id, or null (invalid_api_base). Options override the element's data-*. */
  function render(target, options) {
    var el = typeof target === 'string' ? doc.querySelector(target) : target;
    if (!el || el.nodeType !== 1) throw new Error('seclookupCaptcha.render: no element ' + target);
    var existing = el.getAttribute('data-seclookup-widget-id');
    if (named(existing)) return existing;
    var o = {},
      given = options || {};
    for (var i = 0; i < OPTIONS.length; i++) {
      var name = OPTIONS[i],
        value = given[name] !== undefined ? given[name] : given[dashed(name)];
      o[name] = value !== undefined && value !== null ? value : name === 'apiBase' ? null : el.getAttribute('data-' + dashed(name));
    }
    if (o.apiBase === null && el.hasAttribute('data-api-base'))
      warn("a widget's data-api-base is ignored: set it on the api.js script tag, or as render()'s apiBase");
    if (!o.sitekey) throw new Error('seclookupCaptcha.render: sitekey is required');
    var base = apiBase(o.apiBase || defaultBase || '.');
    if (!base) {
      warn('API base ' + JSON.stringify(String(o.apiBase || defaultBase)) + ' is not http(s)');
      fire(o.errorCallback, 'invalid_api_base');
      return null;
    }
    var origin = new URL(base).origin;
    var lang = language(o.language);
    var id = 'seclookup-captcha-' + ++count;
    var field = String(o.responseFieldName || 'captcha-response');
    var fragment = new URLSearchParams({
      id: id,
      sitekey: String(o.sitekey),
      host: location.hostname,
      origin: location.origin,
      api: origin,
      action: String(o.action || ''),
      mode: o.mode === 'managed' ? 'managed' : 'puzzle',
      pt: /^(pow|slider|random)$/.test(o.puzzleType) ? o.puzzleType : 'pow',
      theme: /^(light|dark|auto)$/.test(o.theme) ? o.theme : 'auto',
      lang: lang,
      t: String(Date.now()),
    });

    var iframe = doc.createElement('iframe');
    iframe.src = base + '/widget/frame.html?v=' + encodeURIComponent(VERSION) + '#' + fragment;
    iframe.title = TITLES[lang];
    iframe.setAttribute('frameborder', '0');
    iframe.setAttribute('scrolling', 'no');
    iframe.style.width = '320px';
    iframe.style.height = '76px';
    iframe.style.maxWidth = '100%';
    iframe.style.border = '0';
    iframe.style.display = 'block';
    iframe.style.overflow = 'hidden';

    var form = el.closest ? el.closest('form') : null,
      input = null;
    var scope = form || el,
      inputs = scope.getElementsByTagName('input');
    // The page's own field, never another widget's: two widgets writing one field would each
    // blank the other's proof.
    var shared = false;
    for (var j = 0; j < inputs.length; j++) {
      if (inputs[j].name !== field) continue;
      if (inputs[j].hasAttribute('data-seclookup-field')) shared = true;
      else input = inputs[j];
    }
    if (shared) warn('two widgets in one form share the field ' + JSON.stringify(field) + ': give each its own data-response-field-name');
    var created = !input;
    if (created) {
      input = doc.createElement('input');
      input.type = 'hidden';
      input.name = field;
      input.setAttribute('data-seclookup-field', '');
    }
    input.value = '';

    var wd = {
      id: id,
      el: el,
      iframe: iframe,
      input: input,
      created: created,
      origin: origin,
      o: o,
      proof: '',
      expired: false,
      timer: 0,
      ready: false,
      queue: [],
      mismatch: false,
    };
    widgets[id] = wd;
    el.setAttribute('data-seclookup-widget-id', id);
    el.appendChild(iframe);
    if (created) el.appendChild(input);
    return id;
  }

  win.addEventListener('message', function (e) {
    var m = e.data,
      wd = m && m.seclookup === 'captcha' ? named(m.id) : null;
    if (!wd || e.source !== wd.iframe.contentWindow) return;
    if (e.origin !== wd.origin) {
      // Our iframe, elsewhere than api.js's URL said (it redirects): trust nothing it says, but say why nothing works.
      if (!wd.mismatch) {
        wd.mismatch = true;
        warn('the frame is at ' + e.origin + ', not ' + wd.origin + ': load api.js from the API origin, or set data-api-base on its script tag');
        fire(wd.o.errorCallback, 'origin_mismatch');
      }
      return;
    }
    if (m.type === 'ready') {
      wd.ready = true;
      while (wd.queue.length) send(wd, wd.queue.shift());
    } else if (m.type === 'size') {
      if (m.h > 0 && m.h < 1000) wd.iframe.style.height = Math.ceil(m.h) + 'px';
      wd.iframe.style.width = Math.max(320, Math.min(1000, m.w | 0)) + 'px';
    } else if (m.type === 'success' && typeof m.proof === 'string' && m.proof.length <= 4096 && PROOF.test(m.proof)) {
      setProof(wd, m.proof);
      wd.timer = setTimeout(function () {
        setProof(wd, '');
        wd.expired = true;
        fire(wd.o.expiredCallback);
        send(wd, 'expire');
      }, EXPIRES_MS);
      fire(wd.o.callback, m.proof);
    } else if (m.type === 'error') {
      setProof(wd, '');
      fire(wd.o.errorCallback, typeof m.code === 'string' && CODE.test(m.code) ? m.code : 'invalid_message');
    }
  });

  function renderAll(renderOne) {
    var els = doc.querySelectorAll('.seclookup-captcha[data-sitekey]');
    for (var i = 0; i < els.length; i++) if (!els[i].getAttribute('data-seclookup-widget-id')) renderOne(els[i]);
  }

  /** Once the document is parsed: render the widgets (unless ?render=explicit), then call ?onload=. */
  function whenReady(renderOne) {
    function go() {
      if (query.get('render') !== 'explicit') renderAll(renderOne);
      var onload = query.get('onload');
      if (onload) fire(onload);
    }
    if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', go);
    else go();
  }

  // Back/forward cache: the page comes back as it was left, its proof most likely used already.
  win.addEventListener('pageshow', function (e) {
    if (e.persisted) for (var k in widgets) reset(widgets[k]);
  });

  win.seclookupCaptcha = {
    version: VERSION,
    render: render,
    /** Clear the proof and start over (managed mode re-runs its check). */
    reset: function (id) {
      var wd = find(id);
      if (wd) reset(wd);
    },
    remove: function (id) {
      var wd = named(id) || find(id);
      if (!wd) return;
      clearTimeout(wd.timer);
      if (wd.iframe.parentNode) wd.iframe.parentNode.removeChild(wd.iframe);
      if (wd.created && wd.input.parentNode) wd.input.parentNode.removeChild(wd.input);
      else wd.input.value = '';
      wd.el.removeAttribute('data-seclookup-widget-id');
      delete widgets[wd.id];
    },
    /** The current proof, or '' when there is none (not verified yet, expired, reset). */
    getResponse: function (id) {
      var wd = find(id);
      return wd ? wd.proof : '';
    },
    /** Start verification without a click (the visitor may still have to solve a slider). */
    execute: function (id) {
      var wd = find(id);
      if (wd) send(wd, 'execute');
    },
    isExpired: function (id) {
      var wd = find(id);
      return wd ? wd.expired : false;
    },
  };

  whenReady(render);
})(window, document);
