/* seclookup captcha loader: <script src="{base}/widget/api.js" async defer></script>.
 * Renders every .seclookup-captcha[data-sitekey] (unless ?render=explicit) as an iframe from the
 * API origin, and exposes window.seclookupCaptcha. Touches the page only through DOM and CSSOM
 * (no inline styles, no injected <style>, no eval), so a strict page CSP needs only script-src
 * and frame-src for the API origin. See the README (captcha, the widget). */
(function (win, doc) {
  'use strict';
  if (win.seclookupCaptcha && win.seclookupCaptcha.version) return;
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

  var script = doc.currentScript;
  if (!script) {
    var all = doc.getElementsByTagName('script');
    for (var i = all.length - 1; i >= 0 && !script; i--) if (/\/widget\/api\.js(?:[?#]|$)/.test(all[i].src)) script = all[i];
  }
  var src = script ? script.src : '';
  var defaultBase = src.replace(/\/widget\/api\.js(?:[?#].*)?$/, '');
  var query = new URLSearchParams(src.split('#')[0].split('?')[1] || '');

  var widgets = {};
  var count = 0;

  function dashed(name) {
    return name.replace(/[A-Z]/g, function (c) {
      return '-' + c.toLowerCase();
    });
  }

  /** A callback option: a function, or the name of a global function (looked up when called). */
  function fire(fn, arg) {
    if (typeof fn === 'string') fn = win[fn];
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

  function find(id) {
    if (id === undefined || id === null) for (var k in widgets) return widgets[k];
    if (id && id.nodeType === 1) id = id.getAttribute('data-seclookup-widget-id');
    return widgets[id] || null;
  }

  function send(wd, type) {
    if (!wd.ready) {
      wd.queue.push(type);
      return;
    }
    wd.iframe.contentWindow.postMessage({ seclookup: 'captcha', id: wd.id, type: type }, wd.origin);
  }

  function setProof(wd, proof) {
    clearTimeout(wd.timer);
    wd.proof = proof;
    wd.expired = false;
    wd.input.value = proof;
  }

  /** render(element or selector, options) -> widget id. Options override the element's data-*. */
  function render(target, options) {
    var el = typeof target === 'string' ? doc.querySelector(target) : target;
    if (!el || el.nodeType !== 1) throw new Error('seclookupCaptcha.render: no element ' + target);
    var existing = el.getAttribute('data-seclookup-widget-id');
    if (existing && widgets[existing]) return existing;
    var o = {},
      given = options || {};
    for (var i = 0; i < OPTIONS.length; i++) {
      var name = OPTIONS[i],
        value = given[name] !== undefined ? given[name] : given[dashed(name)];
      o[name] = value !== undefined && value !== null ? value : el.getAttribute('data-' + dashed(name));
    }
    if (!o.sitekey) throw new Error('seclookupCaptcha.render: sitekey is required');
    var base = new URL(String(o.apiBase || defaultBase || '.'), location.href).href.replace(/[?#].*$/, '').replace(/\/+$/, '');
    var lang = language(o.language);
    var id = 'seclookup-captcha-' + ++count;
    var field = String(o.responseFieldName || 'captcha-response');
    var fragment = new URLSearchParams({
      id: id,
      sitekey: String(o.sitekey),
      host: location.hostname,
      origin: location.origin,
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
    for (var j = 0; j < inputs.length; j++) if (inputs[j].name === field) input = inputs[j];
    var created = !input;
    if (created) {
      input = doc.createElement('input');
      input.type = 'hidden';
      input.name = field;
    }
    input.value = '';

    var wd = {
      id: id,
      el: el,
      iframe: iframe,
      input: input,
      created: created,
      origin: new URL(base).origin,
      o: o,
      proof: '',
      expired: false,
      timer: 0,
      ready: false,
      queue: [],
    };
    widgets[id] = wd;
    el.setAttribute('data-seclookup-widget-id', id);
    el.appendChild(iframe);
    if (created) el.appendChild(input);
    return id;
  }

  win.addEventListener('message', function (e) {
    var m = e.data,
      wd = m && m.seclookup === 'captcha' ? widgets[m.id] : null;
    if (!wd || e.origin !== wd.origin || e.source !== wd.iframe.contentWindow) return;
    if (m.type === 'ready') {
      wd.ready = true;
      while (wd.queue.length) send(wd, wd.queue.shift());
    } else if (m.type === 'size') {
      if (m.h > 0 && m.h < 1000) wd.iframe.style.height = Math.ceil(m.h) + 'px';
      wd.iframe.style.width = Math.max(320, Math.min(1000, m.w | 0)) + 'px';
    } else if (m.type === 'success' && typeof m.proof === 'string') {
      setProof(wd, m.proof);
      wd.timer = setTimeout(function () {
        setProof(wd, '');
        wd.expired = true;
        send(wd, 'expire');
        fire(wd.o.expiredCallback);
      }, EXPIRES_MS);
      fire(wd.o.callback, m.proof);
    } else if (m.type === 'error') {
      setProof(wd, '');
      fire(wd.o.errorCallback, String(m.code));
    }
  });

  function renderAll() {
    var els = doc.querySelectorAll('.seclookup-captcha[data-sitekey]');
    for (var i = 0; i < els.length; i++) if (!els[i].getAttribute('data-seclookup-widget-id')) render(els[i]);
  }

  win.seclookupCaptcha = {
    version: VERSION,
    render: render,
    /** Clear the proof and start over (managed mode re-runs its check). */
    reset: function (id) {
      var wd = find(id);
      if (!wd) return;
      setProof(wd, '');
      send(wd, 'reset');
    },
    remove: function (id) {
      var wd = find(id);
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

  function ready() {
    if (query.get('render') !== 'explicit') renderAll();
    var onload = query.get('onload');
    if (onload) fire(onload);
  }
  if (doc.readyState === 'loading') doc.addEventListener('DOMContentLoaded', ready);
  else ready();
})(window, document);
