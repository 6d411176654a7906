// Package config loads vmcp.yaml: the backend MCP servers vmcp connects to as
// a client, the workflow sources it serves, and the server and state-store
// settings.
//
// In: the path of a vmcp.yaml (or JSON) file and an environment lookup
// function for ${VAR} expansion. Out: a validated [Config] whose workflow
// globs are resolved to sorted, deduplicated file paths. Entry point:
// [Load]; the compiler reads [Config.Sources] to find the workflow files.
//
// The keys (camelCase or snake_case) and their defaults:
//
//	backends:
//	  NAME: {command, args, env}                    # stdio
//	  NAME: {url, transport: streamable-http|sse, headers, continuousListening,
//	         auth: {kind: bearer|header|client-credentials, ...}}   # backendauth.go
//	        # every backend: timeout (per call, 60s), startTimeout (60s),
//	        # maxParallel (server.maxParallel)
//	workflows: [files, directories or globs]         # relative to the config
//	compositeTools: [...]                           # read by the workflow parser
//	server: {transport: stdio|http, listen: 127.0.0.1:8080, exposeBackendTools,
//	         exposeRunTools, maxParallel: 10,
//	         auth: {tokens: [...], oidc: {issuer, audience, scopes, subjectClaim}},   # oidc.go
//	         allowedOrigins: [https://app.example.com],
//	         allowedHosts: [vmcp.example.com], maxConnections: 1024,
//	         idleTimeout: 120s, readHeaderTimeout: 10s, bodyTimeout: 10s,
//	         maxConnectionsPerClient: 128,   # default maxConnections/8, at least 8
//	         sessions: {idleTimeout: 30m, max: 1000},
//	         console: {maxEventStreams: 256, maxEventStreamsPerSession: 6,
//	                   sessionTTL: 12h, signinFailures: 10, signinLockout: 5m}}
//	state: {store: memory|sqlite|postgres, path: vmcp-state.db, url: postgres://..., lease: 15s,
//	        retention, maxOutputBytes: 1048576}
//	limits: {maxResultBytes: 10485760, maxIterations: 1000}   # server-wide caps
//
// Relative paths (workflows, state.path, a command with a slash) resolve
// against the config file's directory. Errors carry the file position
// (file:line:col) of the offending key or value, and all of them are
// reported together as an [*Error]. A ${VAR} that the environment lacks is
// an error naming the variable and the backend field that used it, and an
// auth token that is empty or blank is an error naming the variable it came
// from. ${VAR} works in any field: in an integer, boolean or duration
// field the expanded text is converted, and a value that does not convert
// is an error at the field naming the variable.
package config
