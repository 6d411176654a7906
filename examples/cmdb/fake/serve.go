package fake

import "github.com/mark3labs/mcp-go/server"

// MaxConcurrentCalls is how many tool calls a fake server runs at once.
const MaxConcurrentCalls = 100

// StdioOptions are the options ServeStdio serves with: MaxConcurrentCalls
// workers and a queue ten times as long.
func StdioOptions() []server.StdioOption {
	return []server.StdioOption{server.WithWorkerPoolSize(MaxConcurrentCalls), server.WithQueueSize(10 * MaxConcurrentCalls)}
}

// ServeStdio serves s on stdin and stdout until stdin closes.
func ServeStdio(s *server.MCPServer) error {
	return server.ServeStdio(s, StdioOptions()...)
}
