// The analytics screen's island: draws visits per day with uPlot (served from our origin) into each
// [data-chart] figure. Without script the table next to it carries the same numbers.
(function () {
  'use strict';
  function draw(figure) {
    var days = JSON.parse(figure.getAttribute('data-days') || '[]');
    var values = JSON.parse(figure.getAttribute('data-values') || '[]');
    var slot = figure.querySelector('.chart-slot');
    if (!slot || typeof window.uPlot !== 'function' || days.length === 0) return;
    var xs = days.map(function (d) {
      return Date.parse(d + 'T00:00:00Z') / 1000;
    });
    slot.textContent = '';
    var width = function () {
      return Math.max(200, slot.clientWidth);
    };
    var chart = new window.uPlot(
      {
        width: width(),
        height: 220,
        tzDate: function (ts) {
          return window.uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');
        },
        legend: { show: false },
        cursor: { show: true, drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: [0, Math.max(1, Math.max.apply(null, values))] } },
        axes: [{ stroke: '#4b5563' }, { stroke: '#4b5563' }],
        series: [
          {},
          {
            label: 'Visits',
            stroke: '#1d4ed8',
            fill: 'rgba(29, 78, 216, 0.12)',
            width: 2,
            points: { show: days.length <= 31 },
          },
        ],
      },
      [xs, values],
      slot,
    );
    figure.classList.add('drawn');
    if (window.ResizeObserver) {
      new window.ResizeObserver(function () {
        chart.setSize({ width: width(), height: 220 });
      }).observe(slot);
    }
  }
  function start() {
    var figures = document.querySelectorAll('[data-chart]');
    for (var i = 0; i < figures.length; i++) draw(figures[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
