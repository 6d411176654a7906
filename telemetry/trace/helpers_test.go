package trace

import "github.com/vmcp-dev/vmcp/config"

func configTelemetry(set bool) config.Telemetry { return config.Telemetry{Set: set} }
