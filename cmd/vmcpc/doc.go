// Command vmcpc is the vmcp compiler: it checks composite-tool workflows and
// turns them into execution plans.
//
// In: workflow files, directories and globs (YAML or JSON, Kubernetes
// resources or compositeTools configs) and compiled plan.json files. Out:
// diagnostics on stderr (text with source line and caret, JSON, or GitHub
// annotations), a plan.json, and views of a plan (text timeline, JSON,
// Graphviz DOT, Mermaid). Entry point: newRootCmd in main.go, which builds
// the cobra command tree:
//
//	vmcpc compile [FILE|DIR|GLOB]... [-o plan.json] [--format text|json|github] [-v] [--tools tools.lock.json | --config vmcp.yaml]
//	vmcpc plan FILE [--tool NAME] [--format text|json|dot|mermaid]
//	vmcpc schema
//	vmcpc tools pull --config vmcp.yaml -o tools.lock.json   (tools.go)
//
// Exit status: 0 on success (warnings allowed), 1 when the inputs have
// errors or a file cannot be read or written, 2 on bad usage.
package main
