// Command kube-controller-manager is the upstream controller manager, for tests
// that need Jobs, StatefulSets or garbage collection to really happen.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
