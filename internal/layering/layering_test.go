package layering

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const module = "github.com/vmcp-dev/vmcp"

// layerOf names the layer of a package path inside the module (module
// prefix removed).
func layerOf(pkg string) string {
	if pkg == "internal/irbuild" {
		// Test plans go through the planner, as compiled ones do.
		return "compiler"
	}
	top, _, _ := strings.Cut(pkg, "/")
	switch top {
	case "ir", "toolcall", "diag", "catalog", "internal":
		return "leaves"
	case "parser", "checker", "planner", "compiler", "plangraph", "config":
		return "compiler"
	case "runtime":
		return "engine"
	case "cmd", "bench", "e2e", "examples":
		return "programs"
	}
	if pkg == "authoring/guide" {
		return "compiler"
	}
	return "adapters"
}

var rank = map[string]int{"leaves": 0, "compiler": 1, "engine": 2, "adapters": 3, "programs": 4}

// sideways lists the imports allowed inside one layer. Within the leaves,
// ir is the bottom of everything; within the compiler, the pipeline runs
// forward; adapters may use another adapter's public API only along these
// edges (the MCP server is the one the others plug into).
var sideways = map[string][]string{
	// leaves
	"diag":              {"ir"},
	"internal/httpsafe": {},
	// the engine's tests' fake is a toolcall.Backend
	"internal/fakebackend": {"toolcall"},
	// compiler
	"parser":          {"diag", "ir"},
	"checker":         {"parser"},
	"planner":         {},
	"compiler":        {"parser", "checker", "planner"},
	"authoring/guide": {},
	// test plans go through the planner, as compiled ones do
	"internal/irbuild": {"planner"},
	// adapters
	"mcpserver/runtools": {"auth/access", "httpapi"},
	"httpapi":            {"auth/access"},
	"console":            {"auth/access", "httpapi"},
	"authoring":          {"mcpserver", "store/sqlite", "store/postgres"},
	// the backend client sends each backend the credential its config
	// names (backends.<name>.auth)
	"mcpclient": {"auth/credentials"},
	// engine: the semantic suite runs the engine's own cases on any driver
	"runtime/semantictest": {"runtime"},
}

// engineMayImport is everything of vmcp the engine links: the IR, the
// tool call's types and the JMESPath layer its templates evaluate (and,
// for the semantics suite, the plan builders and the fake backend), and
// internal/lazyre, which links only regexp.
var engineMayImport = map[string]bool{"ir": true, "toolcall": true, "internal/jmes": true, "internal/lazyre": true, "internal/irbuild": true, "internal/fakebackend": true, "runtime": true}

// engineMustNotLink are the transports, stores and SDKs the engine never
// reaches, directly or through a dependency (a path and everything under
// it; database/sql/driver stays allowed: uuid implements its Valuer).
var engineMustNotLink = []string{
	"net/http", "github.com/mark3labs/mcp-go", "go.temporal.io",
	"modernc.org/sqlite", "github.com/jackc/pgx", "go.opentelemetry.io",
	"github.com/prometheus",
}

type pkgInfo struct {
	path    string   // without the module prefix
	imports []string // of the module, without its prefix
	deps    []string // every dependency, full paths
}

func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		p := pkgInfo{path: strings.TrimPrefix(strings.TrimPrefix(parts[0], module), "/")}
		for _, imp := range strings.Fields(parts[1]) {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				p.imports = append(p.imports, rest)
			}
		}
		p.deps = strings.Fields(parts[2])
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestImportsPointDown: every import of the module points to a lower
// layer, or sideways along an edge of the table.
func TestImportsPointDown(t *testing.T) {
	for _, p := range listPackages(t) {
		from := layerOf(p.path)
		for _, imp := range p.imports {
			to := layerOf(imp)
			switch {
			case rank[to] < rank[from]:
			case rank[to] == rank[from] && (from == "programs" || allowedSideways(p.path, imp)):
			default:
				t.Errorf("%s (%s) imports %s (%s): imports point down the layers (leaves < compiler < engine < adapters < programs); move the code or add the edge to sideways with a reason", p.path, from, imp, to)
			}
		}
	}
}

func allowedSideways(from, to string) bool {
	if top, _, _ := strings.Cut(from, "/"); strings.HasPrefix(to, top+"/internal/") {
		// A folder's own internal packages (store/internal/rowcodec).
		return true
	}
	if strings.HasPrefix(from, "internal/") && strings.HasPrefix(to, "internal/") && to != "internal/testenv" {
		// internal/lazyre imports nothing of vmcp: any package may
		// compile its error messages' expressions on first use.
		return from == "internal/testenv" || from == "internal/testservers" || from == "internal/fuzzkit" || to == "internal/lazyre"
	}
	if to == "ir" && layerOf(from) == "leaves" {
		return true
	}
	for _, ok := range sideways[from] {
		if ok == to {
			return true
		}
	}
	return false
}

// TestEngineIsTheEngineOnly: runtime imports only the IR, the call types
// and the JMESPath layer of vmcp, and links no transport, store or SDK.
func TestEngineIsTheEngineOnly(t *testing.T) {
	for _, p := range listPackages(t) {
		if layerOf(p.path) != "engine" {
			continue
		}
		for _, imp := range p.imports {
			if !engineMayImport[imp] {
				t.Errorf("engine package %s imports %s: the engine imports only ir, toolcall, internal/jmes and internal/lazyre; an adapter imports the engine, never the reverse", p.path, imp)
			}
		}
		for _, dep := range p.deps {
			for _, bad := range engineMustNotLink {
				if dep == bad || strings.HasPrefix(dep, bad+"/") || dep == "database/sql" {
					t.Errorf("engine package %s links %s: transports, stores and SDKs live in adapters", p.path, dep)
				}
			}
		}
	}
}

// TestCompilerDoesNotLinkTheEngine: vmcpc (compile, plan, tools pull)
// stays a compiler and a client.
func TestCompilerDoesNotLinkTheEngine(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.path != "cmd/vmcpc" {
			continue
		}
		for _, dep := range p.deps {
			if dep == module+"/runtime" || strings.HasPrefix(dep, module+"/runtime/") {
				t.Errorf("cmd/vmcpc links %s", dep)
			}
		}
		return
	}
	t.Fatal("cmd/vmcpc not found by go list")
}

// TestNoFolderOverAQuarter: no top-level folder holds more than a quarter
// of the module's non-test Go lines.
func TestNoFolderOverAQuarter(t *testing.T) {
	root := testenv.RepoRoot()
	lines := map[string]int{}
	total := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := bytes.Count(data, []byte("\n"))
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		lines[top] += n
		total += n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var tops []string
	for k := range lines {
		tops = append(tops, k)
	}
	sort.Strings(tops)
	for _, top := range tops {
		if lines[top]*4 > total {
			t.Errorf("%s/ holds %d of %d non-test Go lines (%.1f%%), over a quarter: split it by what its parts are", top, lines[top], total, 100*float64(lines[top])/float64(total))
		}
	}
}
