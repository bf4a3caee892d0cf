// Command gcsserver is the GCS-compatible object store the tests back snapshots up to:
// fake-gcs-server's fakestorage (in memory) over plain HTTP. It prints "listening on <host:port>"
// once it accepts connections.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Uint("port", 0, "port to listen on")
	buckets := flag.String("buckets", "", "comma-separated buckets to create at start")
	flag.Parse()

	server, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Host:       *host,
		Port:       uint16(*port),
		Scheme:     "http",
		PublicHost: fmt.Sprintf("%s:%d", *host, *port),
		NoListener: false,
	})
	if err != nil {
		log.Fatalf("start: %v", err)
	}
	for _, b := range strings.Split(*buckets, ",") {
		if b = strings.TrimSpace(b); b != "" {
			server.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
		}
	}
	fmt.Fprintf(os.Stdout, "listening on %s\n", server.URL())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	server.Stop()
}
