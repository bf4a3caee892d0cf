// Command coredns is upstream CoreDNS with only the plugins the test node's cluster DNS
// uses, which keeps the build (and the image) a fraction of the full distribution.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The order matters: a plugin sees only requests the ones before it pass on. It is the
// upstream order (core/dnsserver/zdirectives.go) restricted to the plugins linked above.
var directives = []string{"ready", "health", "errors", "log", "cache", "kubernetes"}

func main() {
	dnsserver.Directives = directives
	coremain.Run()
}
