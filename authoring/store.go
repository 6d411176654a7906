package authoring

// The store of authored workflows. Every save is a new version numbered
// one past the highest the name ever had (numbers are never reused, also
// after a delete); a delete hides the workflow but keeps its history.
// MemoryStore keeps versions until the process ends; FileStore and
// SQLiteStore keep them on disk. Each store applies allowSave inside its
// own lock or transaction, so concurrent saves of one name never lose a
// version and never both pass the replace check. The service bounds what a
// store keeps (authoring.limits, service.go): after a save it prunes the
// name's oldest versions past the limit, and it refuses a save past the
// workflow count or the stored bytes.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Version is one saved version of an authored workflow.
type Version struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	// Source is the YAML or JSON exactly as it was saved.
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// Deleted is set on the newest version of a deleted workflow.
	Deleted bool `json:"deleted,omitempty"`
}

// Store keeps authored workflows. Implementations are safe for
// concurrent use.
type Store interface {
	// Save stores source as the next version of name. Unless replace is
	// set, it fails with ErrExists when name has a version that is not
	// deleted.
	Save(ctx context.Context, name, source string, replace bool) (Version, error)
	// Delete marks name deleted and returns its newest version; ErrNotFound
	// when there is nothing to delete.
	Delete(ctx context.Context, name string) (Version, error)
	// Get returns one version; version 0 means the current one, which is
	// ErrNotFound once the workflow is deleted.
	Get(ctx context.Context, name string, version int) (Version, error)
	// List returns the current version of every workflow not deleted,
	// sorted by name.
	List(ctx context.Context) ([]Version, error)
	// Versions returns every version of name, oldest first.
	Versions(ctx context.Context, name string) ([]Version, error)
	// Usage returns the bytes of every kept version's source, of every
	// name (deleted ones too).
	Usage(ctx context.Context) (int64, error)
	// Prune removes the versions of name older than its newest keep
	// ones; numbers are not reused (the next save of name still gets one
	// past its newest).
	Prune(ctx context.Context, name string, keep int) error
	// Close releases the store.
	Close() error
}

// ErrNotFound and ErrExists are wrapped by the stores' errors.
var (
	ErrNotFound = errors.New("no such authored workflow")
	ErrExists   = errors.New("the workflow exists")
)

// allowSave is the replace rule every store applies to the newest stored
// version (nil when there is none).
func allowSave(name string, latest *Version, replace bool) error {
	if latest == nil || latest.Deleted || replace {
		return nil
	}
	return fmt.Errorf("%w: %q is at version %d; pass replace: true to save version %d, or choose another name",
		ErrExists, name, latest.Version, latest.Version+1)
}

// current returns the current version from a name's versions (oldest
// first), or ErrNotFound.
func current(name string, versions []Version, version int) (Version, error) {
	if len(versions) == 0 {
		return Version{}, fmt.Errorf("%w: %q was never saved", ErrNotFound, name)
	}
	if version == 0 {
		v := versions[len(versions)-1]
		if v.Deleted {
			return Version{}, fmt.Errorf("%w: %q was deleted (its versions 1 to %d are kept; ask for one by number)", ErrNotFound, name, v.Version)
		}
		return v, nil
	}
	for _, v := range versions {
		if v.Version == version {
			return v, nil
		}
	}
	return Version{}, fmt.Errorf("%w: %q has no version %d (it has %d to %d; older versions are not kept past authoring.limits.versions)",
		ErrNotFound, name, version, versions[0].Version, versions[len(versions)-1].Version)
}

// MemoryStore keeps authored workflows in memory, until the process ends.
type MemoryStore struct {
	mu       sync.Mutex
	versions map[string][]Version
	now      func() time.Time
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{versions: map[string][]Version{}, now: time.Now}
}

func (m *MemoryStore) Save(_ context.Context, name, source string, replace bool) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.versions[name]
	var latest *Version
	if len(vs) > 0 {
		latest = &vs[len(vs)-1]
	}
	if err := allowSave(name, latest, replace); err != nil {
		return Version{}, err
	}
	next := 1
	if latest != nil {
		next = latest.Version + 1
	}
	v := Version{Name: name, Version: next, Source: source, CreatedAt: m.now().UTC()}
	m.versions[name] = append(vs, v)
	return v, nil
}

func (m *MemoryStore) Delete(_ context.Context, name string) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, err := current(name, m.versions[name], 0)
	if err != nil {
		return Version{}, err
	}
	vs := m.versions[name]
	vs[len(vs)-1].Deleted = true
	v.Deleted = true
	return v, nil
}

func (m *MemoryStore) Get(_ context.Context, name string, version int) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return current(name, m.versions[name], version)
}

func (m *MemoryStore) List(context.Context) ([]Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Version
	for name, vs := range m.versions {
		if v, err := current(name, vs, 0); err == nil {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (m *MemoryStore) Versions(_ context.Context, name string) ([]Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Version(nil), m.versions[name]...), nil
}

func (m *MemoryStore) Usage(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, vs := range m.versions {
		for _, v := range vs {
			n += int64(len(v.Source))
		}
	}
	return n, nil
}

func (m *MemoryStore) Prune(_ context.Context, name string, keep int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if vs := m.versions[name]; keep > 0 && len(vs) > keep {
		m.versions[name] = append([]Version(nil), vs[len(vs)-keep:]...)
	}
	return nil
}

func (m *MemoryStore) Close() error { return nil }
