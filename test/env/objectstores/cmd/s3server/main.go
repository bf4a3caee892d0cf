// Command s3server is the S3-compatible object store the tests back snapshots up to: gofakes3
// (in memory) behind a plain HTTP listener. It prints "listening on <host:port>" once it accepts
// connections, so a test can ask for port 0 and read the port back.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	buckets := flag.String("buckets", "", "comma-separated buckets to create at start")
	flag.Parse()

	backend := s3mem.New()
	for _, b := range strings.Split(*buckets, ",") {
		if b = strings.TrimSpace(b); b != "" {
			if err := backend.CreateBucket(b); err != nil {
				log.Fatalf("create bucket %s: %v", b, err)
			}
		}
	}
	faker := gofakes3.New(backend, gofakes3.WithoutVersioning())
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("listen %s: %v", *addr, err)
	}
	fmt.Fprintf(os.Stdout, "listening on %s\n", ln.Addr().String())
	log.Fatal(http.Serve(ln, faker.Server()))
}
