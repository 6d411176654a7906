// vmcp console: live updates. The pages work without this file; with it,
// the runs list and a running run's page follow the server's events
// (/ui/events) and swap in the HTML the server renders for what changed.
(function () {
  'use strict';

  function parse(html) {
    var t = document.createElement('template');
    t.innerHTML = html.trim();
    return t.content;
  }

  // coalesce calls fn at most every ms milliseconds, with the keys added
  // since the last call.
  function coalesce(ms, fn) {
    var keys = new Set(), timer = null;
    return function (key) {
      keys.add(key);
      if (timer) return;
      timer = setTimeout(function () {
        timer = null;
        var ks = Array.from(keys);
        keys.clear();
        fn(ks);
      }, ms);
    };
  }

  function liveList(list) {
    var filter = list.dataset.filter || '';
    var refresh = coalesce(100, function (ids) { ids.forEach(row); });
    // since: the stream first replays what changed after this page was
    // rendered (events.go).
    var es = new EventSource('/ui/events?since=' + encodeURIComponent(list.dataset.since || ''));
    es.addEventListener('run', function (m) { refresh(JSON.parse(m.data).run); });
    es.addEventListener('resync', function () { location.reload(); });

    function row(id) {
      fetch('/ui/runs/' + encodeURIComponent(id) + '/row?' + filter, { credentials: 'same-origin' })
        .then(function (r) {
          if (r.status === 204) { drop(id); return null; }
          return r.ok ? r.text() : null;
        })
        .then(function (html) {
          if (!html) return;
          var fresh = parse(html).firstElementChild;
          var old = list.querySelector('[data-run="' + CSS.escape(id) + '"]');
          if (old) { old.replaceWith(fresh); return; }
          var empty = document.getElementById('no-runs');
          if (empty) empty.remove();
          list.prepend(fresh); // newest first
        });
    }
    function drop(id) {
      var old = list.querySelector('[data-run="' + CSS.escape(id) + '"]');
      if (old) old.remove();
    }
  }

  function liveRun(box) {
    if (box.dataset.running !== 'true') return;
    var id = box.dataset.run;
    var es = new EventSource('/ui/events?run=' + encodeURIComponent(id) + '&since=' + encodeURIComponent(box.dataset.since || ''));
    var refresh = coalesce(100, reload);
    es.addEventListener('run', function () { refresh('run'); });
    es.addEventListener('resync', function () { refresh('run'); });
    // Loop bodies and child runs send no events of this run: follow them
    // every two seconds as well, while the run goes.
    var poll = setInterval(function () { refresh('poll'); }, 2000);

    function reload() {
      fetch(box.dataset.src, { credentials: 'same-origin' })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var open = Array.from(box.querySelectorAll('details[open]')).map(function (d) { return d.dataset.key; });
          box.replaceChildren(parse(html));
          open.forEach(function (k) {
            var d = box.querySelector('details[data-key="' + CSS.escape(k) + '"]');
            if (d) d.open = true;
          });
          var head = box.querySelector('[data-run-status]');
          var status = head ? head.dataset.runStatus : '';
          // A question came or went: show the page's forms as they are
          // now, unless one is being filled in.
          var shown = Array.from(document.querySelectorAll('form[data-action=answer]')).map(function (f) { return f.dataset.step; }).join(' ');
          var editing = document.activeElement && document.activeElement.closest && document.activeElement.closest('form[data-action=answer]');
          if (head && head.dataset.asking !== shown && !editing) { location.reload(); return; }
          if (status !== 'running' && status !== 'pending') {
            box.dataset.running = 'false';
            es.close();
            clearInterval(poll);
          }
        });
    }
  }

  var runs = document.getElementById('runs');
  if (runs) liveList(runs);
  var live = document.getElementById('live');
  if (live) liveRun(live);
})();
