package store

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// notifyChannel is the PostgreSQL channel every occ process listens on; a
// notification's payload is the topic that changed.
const notifyChannel = "occ_changes"

// AgentTopic is the topic announced when any deployment of an Agent is
// admitted, changes status or is deleted.
func AgentTopic(agentID string) string { return "agent:" + agentID }

// hub delivers announced topics to the subscribers of this process. A
// subscriber's channel holds at most one wake-up: many changes before it
// reads again are one wake-up, and a publisher never blocks.
type hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

func newHub() *hub { return &hub{subs: map[string]map[chan struct{}]struct{}{}} }

func (h *hub) subscribe(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[topic] == nil {
		h.subs[topic] = map[chan struct{}]struct{}{}
	}
	h.subs[topic][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[topic], ch)
		if len(h.subs[topic]) == 0 {
			delete(h.subs, topic)
		}
		h.mu.Unlock()
	}
}

// publish wakes the subscribers of topic; publish("") wakes every one
// (what was announced while nobody listened is unknown).
func (h *hub) publish(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for t, subs := range h.subs {
		if topic != "" && t != topic {
			continue
		}
		for ch := range subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// changes is how a Q announces a change: the store's hub and dialect and,
// inside a transaction, the topics to publish once it commits (SQLite).
type changes struct {
	hub     *hub
	dialect Dialect
	pending *[]string // nil outside a transaction
}

// announce tells this topic's subscribers that it changed, only if and
// once the change commits: on PostgreSQL with pg_notify in the same
// transaction (delivered to every occ process on the database at commit);
// on SQLite, whose one writer is this process, in process after the commit.
func (q Q) announce(ctx context.Context, topic string) error {
	switch {
	case q.ch == nil:
		return nil
	case q.ch.dialect == Postgres:
		return q.execDeferred(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, topic)
	case q.ch.pending != nil:
		*q.ch.pending = append(*q.ch.pending, topic)
	default:
		q.ch.hub.publish(topic)
	}
	return nil
}

// Subscribe returns a channel that receives a value after a change to
// topic commits (at most one value waits), and a function that ends the
// subscription. A subscriber subscribes before it reads the state it
// watches, so no change falls between the two. On PostgreSQL the first
// subscription starts the process's listener; while it reconnects
// notifications can be lost, and every subscriber is woken once it is
// back, so watchers also read again on a slow timer of their own.
func (s *Store) Subscribe(topic string) (<-chan struct{}, func()) {
	if s.dialect == Postgres {
		s.listenMu.Lock()
		if s.stopListen == nil {
			ctx, cancel := context.WithCancel(context.Background())
			s.stopListen, s.listenDone = cancel, make(chan struct{})
			go s.listen(ctx)
		}
		s.listenMu.Unlock()
	}
	return s.hub.subscribe(topic)
}

// listen keeps one connection LISTENing on notifyChannel until ctx ends,
// reconnecting after a failure.
func (s *Store) listen(ctx context.Context) {
	defer close(s.listenDone)
	for {
		_ = s.listenConn(ctx)
		s.hub.publish("") // anything may have changed while not listening
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// listenConn listens on one connection until it fails or ctx ends.
func (s *Store) listenConn(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	// Changes committed before LISTEN took effect were not announced here.
	s.hub.publish("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		s.hub.publish(n.Payload)
	}
}
