// Package config loads vmcp.yaml: the backend MCP servers vmcp connects to as
// a client, the workflow sources it serves, and the server and state-store
// settings.
//
// In: the path of a vmcp.yaml file and an environment lookup function (for
// ${VAR} expansion). Out: a validated [Config] whose workflow globs are
// resolved to sorted, deduplicated file paths. Entry point: [Load]; the
// compiler reads [Config.Sources] to find the workflow files.
//
// Errors carry the file position (file:line:col) of the offending key or
// value. A ${VAR} that the environment lacks is an error naming the variable
// and the backend field that used it.
package config
