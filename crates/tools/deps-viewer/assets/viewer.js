// Pan/zoom and details for the deps viewer page. Vanilla JS, no dependencies.
(function () {
  'use strict';
  var MIN_SCALE = 0.02, MAX_SCALE = 20, FIT_MARGIN = 0.95, DRAG_SLOP = 4;
  var viewport = document.getElementById('viewport');
  var stage = document.getElementById('stage');
  var svg = stage.querySelector('svg');
  var panel = document.getElementById('detail');
  var panelBody = document.getElementById('detail-body');
  if (!svg) { return; }

  // Draw the SVG at 1 user unit = 1 CSS pixel; the transform does the rest.
  var vb = svg.viewBox && svg.viewBox.baseVal;
  var width = vb && vb.width ? vb.width : svg.getBBox().width;
  var height = vb && vb.height ? vb.height : svg.getBBox().height;
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);

  var view = { scale: 1, x: 0, y: 0 };
  function clamp(s) { return Math.min(MAX_SCALE, Math.max(MIN_SCALE, s)); }
  function apply() {
    stage.style.transform = 'translate(' + view.x + 'px,' + view.y + 'px) scale(' + view.scale + ')';
  }
  function zoomAt(factor, cx, cy) {
    var next = clamp(view.scale * factor);
    var k = next / view.scale;
    view.x = cx - (cx - view.x) * k;
    view.y = cy - (cy - view.y) * k;
    view.scale = next;
    apply();
  }
  // Fit the whole graph in the viewport; `maxScale` caps the zoom (the initial view never
  // magnifies a small graph past 1:1, the `f` key does).
  function fit(maxScale) {
    var r = viewport.getBoundingClientRect();
    if (!width || !height || !r.width || !r.height) { return; }
    var s = Math.min(r.width / width, r.height / height) * FIT_MARGIN;
    view.scale = clamp(maxScale ? Math.min(maxScale, s) : s);
    view.x = (r.width - width * view.scale) / 2;
    view.y = (r.height - height * view.scale) / 2;
    apply();
  }
  function reset() { view.scale = 1; view.x = 0; view.y = 0; apply(); }

  // Drag to pan (mouse, pen, one finger); two fingers pinch-zoom.
  var pointers = {}, drag = null, pinch = null, suppressClick = false;
  function local(e) {
    var r = viewport.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }
  function pinchState() {
    var ids = Object.keys(pointers);
    var a = pointers[ids[0]], b = pointers[ids[1]];
    return { dist: Math.hypot(a.x - b.x, a.y - b.y) || 1, cx: (a.x + b.x) / 2, cy: (a.y + b.y) / 2 };
  }
  viewport.addEventListener('pointerdown', function (e) {
    if (e.button !== 0 && e.pointerType === 'mouse') { return; }
    pointers[e.pointerId] = local(e);
    var n = Object.keys(pointers).length;
    if (n === 1) {
      drag = { start: local(e), x: view.x, y: view.y, moved: false };
    } else if (n === 2) {
      drag = null;
      pinch = pinchState();
    }
  });
  window.addEventListener('pointermove', function (e) {
    if (!(e.pointerId in pointers)) { return; }
    pointers[e.pointerId] = local(e);
    if (pinch && Object.keys(pointers).length >= 2) {
      var now = pinchState();
      zoomAt(now.dist / pinch.dist, now.cx, now.cy);
      view.x += now.cx - pinch.cx;
      view.y += now.cy - pinch.cy;
      apply();
      pinch = now;
      suppressClick = true;
    } else if (drag) {
      var p = local(e);
      var dx = p.x - drag.start.x, dy = p.y - drag.start.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) > DRAG_SLOP) {
        drag.moved = true;
        viewport.classList.add('dragging');
      }
      if (drag.moved) {
        view.x = drag.x + dx;
        view.y = drag.y + dy;
        apply();
      }
    }
  });
  function release(e) {
    if (!(e.pointerId in pointers)) { return; }
    delete pointers[e.pointerId];
    if (drag && drag.moved) { suppressClick = true; }
    if (Object.keys(pointers).length < 2) { pinch = null; }
    drag = null;
    viewport.classList.remove('dragging');
  }
  window.addEventListener('pointerup', release);
  window.addEventListener('pointercancel', release);

  // Scroll pans; Ctrl+scroll (and trackpad pinch, which arrives as Ctrl+wheel) zooms.
  viewport.addEventListener('wheel', function (e) {
    e.preventDefault();
    var unit = e.deltaMode === 1 ? 16 : (e.deltaMode === 2 ? viewport.clientHeight : 1);
    if (e.ctrlKey || e.metaKey) {
      var factor = Math.min(1.25, Math.max(0.8, Math.exp(-e.deltaY * unit * 0.01)));
      var p = local(e);
      zoomAt(factor, p.x, p.y);
    } else {
      view.x -= e.deltaX * unit;
      view.y -= e.deltaY * unit;
      apply();
    }
  }, { passive: false });

  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.key === 'f' || e.key === 'F') { fit(0); }
    else if (e.key === 'r' || e.key === 'R') { reset(); }
    else if (e.key === 'Escape') { closePanel(); }
  });

  // SPMD badges: a red "xN" right of each SPMD task.
  var SVG_NS = 'http://www.w3.org/2000/svg';
  Object.keys(spmdBlocks).forEach(function (id) {
    var g = document.getElementById(id);
    if (!g) { return; }
    var box = g.getBBox();
    var text = document.createElementNS(SVG_NS, 'text');
    text.setAttribute('x', box.x + box.width + 3);
    text.setAttribute('y', box.y + box.height / 2 + 4);
    text.setAttribute('class', 'spmd-badge');
    text.textContent = 'x' + spmdBlocks[id];
    g.appendChild(text);
  });

  // Click a task: its fanin and fanout in the detail panel.
  var selected = null;
  function closePanel() {
    panel.hidden = true;
    if (selected) { selected.classList.remove('selected'); selected = null; }
  }
  function peerList(title, ids) {
    var h = document.createElement('h3');
    h.textContent = title + ' ' + ids.length;
    var ul = document.createElement('ul');
    ids.forEach(function (id) {
      var li = document.createElement('li');
      var a = document.createElement('a');
      var s = depStats[id];
      a.textContent = s ? s.label + ' · ' + s.name_hint : id;
      a.addEventListener('click', function () { show(id, true); });
      li.appendChild(a);
      ul.appendChild(li);
    });
    return [h, ul];
  }
  function centerOn(g) {
    var box = g.getBBox();
    var r = viewport.getBoundingClientRect();
    view.x = r.width / 2 - (box.x + box.width / 2) * view.scale;
    view.y = r.height / 2 - (box.y + box.height / 2) * view.scale;
    apply();
  }
  function show(id, center) {
    var s = depStats[id];
    var g = document.getElementById(id);
    if (!s || !g) { return; }
    if (selected) { selected.classList.remove('selected'); }
    selected = g;
    g.classList.add('selected');
    panelBody.textContent = '';
    var h = document.createElement('h2');
    h.textContent = (s.marker ? s.marker + ' ' : '') + 'TASK ' + s.label;
    panelBody.appendChild(h);
    [['kind', s.kind], ['func', s.func], ['name', s.name_hint]].forEach(function (kv) {
      if (!kv[1]) { return; }
      var div = document.createElement('div');
      div.textContent = kv[0] + ': ' + kv[1];
      panelBody.appendChild(div);
    });
    if (s.blocks > 1) {
      var b = document.createElement('div');
      b.textContent = 'SPMD block num = ' + s.blocks;
      panelBody.appendChild(b);
    }
    [['fan-in by kernel', s.pred_by_hint], ['fan-out by kernel', s.succ_by_hint]].forEach(function (kv) {
      if (!kv[1] || !kv[1].length) { return; }
      var div = document.createElement('div');
      div.className = 'by-hint';
      div.textContent = kv[0] + ': ' + kv[1].map(function (e) { return e[0] + ' ×' + e[1]; }).join(', ');
      panelBody.appendChild(div);
    });
    peerList('FANIN', s.fanin).concat(peerList('FANOUT', s.fanout)).forEach(function (el) {
      panelBody.appendChild(el);
    });
    panel.hidden = false;
    if (center) { centerOn(g); }
  }
  svg.querySelectorAll('g.node').forEach(function (g) {
    g.addEventListener('click', function (e) {
      if (suppressClick) { suppressClick = false; return; }
      e.stopPropagation();
      show(g.id, false);
    });
  });
  viewport.addEventListener('click', function () { suppressClick = false; });
  document.getElementById('detail-close').addEventListener('click', closePanel);

  window.depsViewer = { fit: fit, reset: reset, show: show, view: view };
  fit(1);
})();
