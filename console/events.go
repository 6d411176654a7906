package console

// Live updates: the engine's events as server-sent events.
//
// The engine calls Observe synchronously on each run's goroutine, so
// publish must never block: each subscriber (one open page) has a small
// buffered channel, and an event that does not fit is dropped and the
// subscriber marked behind. A subscriber that is behind gets one "resync"
// event as soon as there is room, and the page then reloads what it shows
// in full, so a slow browser costs a reload, never a stalled run.
//
// Events carry only ids and statuses; the page fetches the HTML of what
// changed (a run's row, or a run page's live part) from the server, which
// renders it with the same templates as the full page.
//
// GET /ui/events streams the events of every run the caller sees (its
// own; every run for admin, package access); ?run=ID only that run's. A
// page subscribes only after it has been rendered, so it tells the stream
// when that was (?since=Unix milliseconds): the stream first sends a
// "snapshot" event for each run that started, ended or was still going
// since then (or, with ?run=, for that run), and the page fetches those as
// it does for live events. So a run that changed between render and
// subscribe is not missed. A comment line goes out every heartbeat so that proxies keep the stream
// open, and every stream ends when the console is closed (server
// shutdown).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

type sessionKey struct{}

// withSession puts the signed-in session's id into ctx.
func withSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// sessionOf is the session id withSession put into ctx, "" without one.
func sessionOf(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

// subscriberBuffer is how many events a page may lag behind before it
// has to resync.
const subscriberBuffer = 64

// heartbeat is the interval of keep-alive comments on an idle stream.
const heartbeat = 15 * time.Second

// wireEvent is the data of one server-sent event.
type wireEvent struct {
	Run      string `json:"run"`
	Workflow string `json:"workflow"`
	Kind     string `json:"kind"`
	Step     string `json:"step,omitempty"`
	Status   string `json:"status"`
}

type subscriber struct {
	run    string            // "" for every run
	owner  string            // the session id, or the client address without sign-in
	who    httpsafe.Identity // the caller: it gets the events of the runs it sees
	ch     chan wireEvent
	ended  chan struct{} // closed when the owner's session ends
	behind bool          // guarded by hub.mu
}

type hub struct {
	mu       sync.Mutex
	subs     map[*subscriber]struct{}
	byOwner  map[string]int // open streams by subscriber.owner
	max      int            // streams in all
	perOwner int            // streams of one owner
	done     chan struct{}
	closed   bool
}

func newHub(l Limits) *hub {
	return &hub{subs: map[*subscriber]struct{}{}, byOwner: map[string]int{}, max: l.MaxEventStreams,
		perOwner: l.MaxEventStreamsPerSession, done: make(chan struct{})}
}

// refusal is why subscribe refused a stream: the status and message.
type refusal struct {
	code int
	msg  string
}

func (h *hub) publish(ev runtime.Event) {
	e := wireEvent{Run: ev.RunID, Workflow: ev.Workflow, Kind: string(ev.Kind), Step: ev.StepID, Status: string(ev.Status)}
	if ev.Kind == runtime.EventRunFinished && e.Status == string(runtime.RunRunning) {
		// The event goes out before the record's final status is set.
		e.Status = "finished"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if (s.run != "" && s.run != e.Run) || !s.who.Sees(ev.Owner) {
			continue
		}
		if s.behind {
			select {
			case s.ch <- wireEvent{Kind: "resync"}:
				s.behind = false
			default:
				continue
			}
		}
		select {
		case s.ch <- e:
		default:
			s.behind = true
		}
	}
}

// subscribe opens a stream of owner's (a session), which gets the events
// of the runs who may see, unless the server is shutting down or a cap
// is reached.
func (h *hub) subscribe(run, owner string, who httpsafe.Identity) (*subscriber, *refusal) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, &refusal{http.StatusServiceUnavailable, "the server is shutting down"}
	case h.byOwner[owner] >= h.perOwner:
		return nil, &refusal{http.StatusTooManyRequests, fmt.Sprintf("this session already has %d live-update streams open (server.console.maxEventStreamsPerSession); close a console tab and reload", h.perOwner)}
	case len(h.subs) >= h.max:
		return nil, &refusal{http.StatusServiceUnavailable, fmt.Sprintf("the server already serves %d live-update streams (server.console.maxEventStreams); reload later", h.max)}
	}
	s := &subscriber{run: run, owner: owner, who: who, ch: make(chan wireEvent, subscriberBuffer), ended: make(chan struct{})}
	h.subs[s] = struct{}{}
	h.byOwner[owner]++
	return s, nil
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
	if h.byOwner[s.owner]--; h.byOwner[s.owner] <= 0 {
		delete(h.byOwner, s.owner)
	}
}

// endOwner ends the streams of owner (a session that signed out).
func (h *hub) endOwner(owner string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.owner == owner {
			select {
			case <-s.ended:
			default:
				close(s.ended)
			}
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

func (c *Console) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	owner := sessionOf(r.Context())
	if owner == "" {
		owner = "client " + httpsafe.ClientKeyOf(r.RemoteAddr)
	}
	s, no := c.events.subscribe(r.URL.Query().Get("run"), owner, httpsafe.Caller(r.Context()))
	if no != nil {
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "10")
		http.Error(w, no.msg, no.code)
		return
	}
	defer c.events.unsubscribe(s)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// retry: how long the browser waits before reconnecting.
	if _, err := w.Write([]byte("retry: 2000\n: vmcp console events\n\n")); err != nil {
		return
	}
	for _, e := range c.snapshot(r, s.run) {
		data, _ := json.Marshal(e)
		w.Write(append(append([]byte("event: run\ndata: "), data...), "\n\n"...))
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		var msg []byte
		select {
		case <-r.Context().Done():
			return
		case <-c.events.done:
			return
		case <-s.ended:
			return
		case <-tick.C:
			msg = []byte(": keep-alive\n\n")
		case e := <-s.ch:
			data, _ := json.Marshal(e)
			name := "run"
			if e.Kind == "resync" {
				name = "resync"
			}
			msg = append(append([]byte("event: "+name+"\ndata: "), data...), "\n\n"...)
		}
		if _, err := w.Write(msg); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// snapshotLimit bounds how many runs a snapshot looks at (the newest).
const snapshotLimit = 200

// snapshot lists the runs that changed since the page's ?since= (see the
// top of this file): with run set, that run alone.
func (c *Console) snapshot(r *http.Request, run string) []wireEvent {
	ms, err := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	if err != nil {
		return nil
	}
	since := time.UnixMilli(ms)
	var runs []*runtime.Run
	if run != "" {
		if one, err := c.getRun(r.Context(), run); err == nil {
			runs = append(runs, one)
		}
	} else if runs, err = c.opts.Store.ListRuns(r.Context(), runtime.RunFilter{Limit: snapshotLimit, Summary: true}); err != nil {
		c.log.Warn("console: listing runs for an event stream", "err", err)
		return nil
	}
	var out []wireEvent
	for i := len(runs) - 1; i >= 0; i-- { // oldest first, as they happened
		x := runs[i]
		if !x.Status.Finished() || x.StartedAt.After(since) || x.EndedAt.After(since) || run != "" {
			out = append(out, wireEvent{Run: x.ID, Workflow: x.Workflow, Kind: "snapshot", Status: string(x.Status)})
		}
	}
	return out
}
