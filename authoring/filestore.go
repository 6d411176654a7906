package authoring

// FileStore keeps authored workflows as YAML files in one directory, a
// layout a team can commit and review:
//
//	<dir>/<name>.yaml      the current version (absent once deleted)
//	<dir>/<name>.v<N>.yaml every saved version, N = 1, 2, ...
//
// The current file is a copy of the newest version file, written by
// rename so a reader never sees half a file; version files are created
// with O_EXCL, so two processes saving the same name at once get distinct
// numbers too (within one process a mutex orders the saves). A version's
// time is its file's modification time. Workflow names cannot hold dots
// or slashes, so every file name is unambiguous and stays in dir.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FileStore is a Store over a directory.
type FileStore struct {
	dir string
	mu  sync.Mutex
}

var versionFileRE = regexp.MustCompile(`^([a-z0-9][a-z0-9_-]*)\.v([1-9][0-9]*)\.yaml$`)

// NewFileStore uses dir, creating it when it does not exist.
func NewFileStore(dir string) (*FileStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("authoring.dir: %w", err)
	}
	return &FileStore{dir: dir}, nil
}

// Dir is the store's directory.
func (f *FileStore) Dir() string { return f.dir }

func (f *FileStore) currentPath(name string) string { return filepath.Join(f.dir, name+".yaml") }

func (f *FileStore) versionPath(name string, n int) string {
	return filepath.Join(f.dir, fmt.Sprintf("%s.v%d.yaml", name, n))
}

// versions reads the version files of name (or of every name when name is
// ""), oldest first, with their sources.
func (f *FileStore) versions(name string) (map[string][]Version, error) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, fmt.Errorf("authoring.dir: %w", err)
	}
	out := map[string][]Version{}
	for _, e := range entries {
		m := versionFileRE.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() || (name != "" && m[1] != name) {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		src, err := os.ReadFile(filepath.Join(f.dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[m[1]] = append(out[m[1]], Version{Name: m[1], Version: n, Source: string(src), CreatedAt: info.ModTime().UTC()})
	}
	for wf, vs := range out {
		sort.Slice(vs, func(i, j int) bool { return vs[i].Version < vs[j].Version })
		if _, err := os.Stat(f.currentPath(wf)); errors.Is(err, fs.ErrNotExist) {
			vs[len(vs)-1].Deleted = true
		}
	}
	return out, nil
}

func (f *FileStore) Save(_ context.Context, name, source string, replace bool) (Version, error) {
	if strings.ContainsAny(name, `./\`) || name == "" {
		return Version{}, fmt.Errorf("authoring: %q is not a workflow name", name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// Only the newest version's number and whether name is deleted matter
	// here: the sources of older versions are not read.
	nums, _, err := f.numbers(name)
	if err != nil {
		return Version{}, err
	}
	var latest *Version
	next := 1
	if len(nums) > 0 {
		n := nums[len(nums)-1]
		latest = &Version{Name: name, Version: n, Deleted: !exists(f.currentPath(name))}
		next = n + 1
	}
	if err := allowSave(name, latest, replace); err != nil {
		return Version{}, err
	}
	for {
		file, err := os.OpenFile(f.versionPath(name, next), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) { // another process took the number
			next++
			continue
		}
		if err != nil {
			return Version{}, err
		}
		_, werr := file.WriteString(source)
		if cerr := file.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(file.Name())
			return Version{}, werr
		}
		break
	}
	if err := writeFileAtomic(f.currentPath(name), source); err != nil {
		return Version{}, err
	}
	info, err := os.Stat(f.versionPath(name, next))
	if err != nil {
		return Version{}, err
	}
	return Version{Name: name, Version: next, Source: source, CreatedAt: info.ModTime().UTC()}, nil
}

// writeFileAtomic writes through a temporary file and a rename. The
// temporary is opened with 0644 (less umask), as the version files are:
// os.CreateTemp would make it 0600 and the rename would keep that, so the
// two files of one save had different modes. Authored files are meant
// to be committed, hence readable.
func writeFileAtomic(path, content string) error {
	tmpName := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+strconv.FormatInt(time.Now().UnixNano(), 36))
	tmp, err := os.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(content)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

func (f *FileStore) Delete(ctx context.Context, name string) (Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, err := f.get(name, 0)
	if err != nil {
		return Version{}, err
	}
	if err := os.Remove(f.currentPath(name)); err != nil {
		return Version{}, err
	}
	v.Deleted = true
	return v, nil
}

func (f *FileStore) Get(_ context.Context, name string, version int) (Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.get(name, version)
}

func (f *FileStore) get(name string, version int) (Version, error) {
	if strings.ContainsAny(name, `./\`) {
		return Version{}, fmt.Errorf("%w: %q is not a workflow name", ErrNotFound, name)
	}
	all, err := f.versions(name)
	if err != nil {
		return Version{}, err
	}
	return current(name, all[name], version)
}

func (f *FileStore) List(context.Context) ([]Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.versions("")
	if err != nil {
		return nil, err
	}
	var out []Version
	for name, vs := range all {
		if v, err := current(name, vs, 0); err == nil {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *FileStore) Versions(_ context.Context, name string) ([]Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.versions(name)
	if err != nil {
		return nil, err
	}
	return all[name], nil
}

// numbers returns the version numbers of name (of every name when name is
// ""), ascending, and the total size of those version files, reading the
// directory but no file.
func (f *FileStore) numbers(name string) ([]int, int64, error) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, 0, fmt.Errorf("authoring.dir: %w", err)
	}
	var nums []int
	var size int64
	for _, e := range entries {
		m := versionFileRE.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() || (name != "" && m[1] != name) {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		nums = append(nums, n)
		if info, err := e.Info(); err == nil {
			size += info.Size()
		}
	}
	sort.Ints(nums)
	return nums, size, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func (f *FileStore) Usage(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, size, err := f.numbers("")
	return size, err
}

func (f *FileStore) Prune(_ context.Context, name string, keep int) error {
	if strings.ContainsAny(name, `./\`) || name == "" {
		return fmt.Errorf("authoring: %q is not a workflow name", name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	nums, _, err := f.numbers(name)
	if err != nil || keep <= 0 || len(nums) <= keep {
		return err
	}
	for _, n := range nums[:len(nums)-keep] {
		if err := os.Remove(f.versionPath(name, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (f *FileStore) Close() error { return nil }
