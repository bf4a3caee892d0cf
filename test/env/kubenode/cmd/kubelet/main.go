// Command kubelet is the upstream node agent, built from the same k8s.io/kubernetes
// module and flags as the control plane so both share one Go build cache.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client metrics on /metrics, as upstream registers them
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
