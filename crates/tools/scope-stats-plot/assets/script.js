(function () {
  'use strict';
  var siteNode = document.getElementById('site-table');
  var sites = siteNode ? JSON.parse(siteNode.textContent) : [];
  var tip = document.getElementById('tooltip');
  var modal = document.getElementById('chart-modal');
  var content = document.getElementById('chart-modal-content');
  var closeButton = modal.querySelector('.modal-close');
  var lastFocus = null;

  function isPoint(node) {
    return node instanceof SVGCircleElement && node.closest('.pts') !== null;
  }

  function showPoint(circle, ev) {
    var series = circle.closest('.series');
    var svg = circle.ownerSVGElement;
    var site = sites[Number(circle.getAttribute('data-s'))];
    var text = series.getAttribute('data-metric') + ' · scope #' +
      circle.getAttribute('data-i') + ' · y=' + circle.getAttribute('data-y') +
      ' · site=' + (site === undefined ? 'unknown' : site);
    // Lines drawn earlier may hide under this point: name those with the same value.
    var same = [];
    svg.querySelectorAll('.pts circle[data-i="' + circle.getAttribute('data-i') + '"]')
      .forEach(function (other) {
        var s = other.closest('.series');
        var m = s.getAttribute('data-metric');
        if (m !== series.getAttribute('data-metric') &&
            other.getAttribute('data-v') === circle.getAttribute('data-v')) {
          if (same.indexOf(m) < 0) { same.push(m); }
        }
      });
    if (same.length > 0) { text += ' (same as ' + same.join(', ') + ')'; }
    tip.textContent = text;
    tip.hidden = false;
    var x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    var y = Math.min(ev.clientY + 14, window.innerHeight - tip.offsetHeight - 8);
    tip.style.left = Math.max(4, x) + 'px';
    tip.style.top = Math.max(4, y) + 'px';
    var hl = svg.querySelector('circle.hl');
    if (hl) {
      hl.setAttribute('cx', circle.getAttribute('cx'));
      hl.setAttribute('cy', circle.getAttribute('cy'));
      hl.style.stroke = getComputedStyle(series).getPropertyValue('--c');
      hl.classList.add('on');
    }
  }

  function hidePoint(circle) {
    tip.hidden = true;
    var hl = circle.ownerSVGElement && circle.ownerSVGElement.querySelector('circle.hl');
    if (hl) { hl.classList.remove('on'); }
  }

  document.addEventListener('mouseover', function (ev) {
    if (isPoint(ev.target)) { showPoint(ev.target, ev); }
  });
  document.addEventListener('mouseout', function (ev) {
    if (isPoint(ev.target)) { hidePoint(ev.target); }
  });

  function openModal(figure) {
    var svg = figure.querySelector('svg');
    if (!svg) { return; }
    var copy = svg.cloneNode(true);
    content.replaceChildren(copy);
    modal.hidden = false;
    document.body.classList.add('modal-open');
    lastFocus = figure;
    tip.hidden = true;
    closeButton.focus();
  }

  function closeModal() {
    content.replaceChildren();
    modal.hidden = true;
    tip.hidden = true;
    document.body.classList.remove('modal-open');
    if (lastFocus) { lastFocus.focus(); lastFocus = null; }
  }

  document.addEventListener('click', function (ev) {
    var target = ev.target;
    if (!(target instanceof Element)) { return; }
    if (!modal.hidden) {
      if (target.closest('[data-close]')) { closeModal(); }
      return;
    }
    var figure = target.closest('figure.chart');
    if (figure) { openModal(figure); }
  });

  document.addEventListener('keydown', function (ev) {
    if (!modal.hidden) {
      if (ev.key === 'Escape') { ev.preventDefault(); closeModal(); }
      return;
    }
    var active = document.activeElement;
    if ((ev.key === 'Enter' || ev.key === ' ') && active && active.matches('figure.chart')) {
      ev.preventDefault();
      openModal(active);
    }
  });
})();
