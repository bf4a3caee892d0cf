import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mirrorInSources } from "../../src/testenv/debian-package.js";

// Where the pinned .debs (cosign, docker-registry) are fetched from: the Debian archive the machine's
// apt already uses, read from its source files in either format.

describe("the Debian mirror in apt's sources", () => {
  it("reads deb822 URIs, skipping other archives and the security one", () => {
    const sources = [
      "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n",
      [
        "Types: deb",
        "# http://snapshot.debian.org/archive/debian/20250520T000000Z",
        "URIs: http://mirror.example.org/debian-security http://mirror.example.org/debian/",
        "Suites: bookworm bookworm-updates",
      ].join("\n"),
    ];
    assert.equal(mirrorInSources(sources), "http://mirror.example.org/debian");
  });

  it("reads one-line sources with options, ignoring comments", () => {
    const list = [
      "# deb http://old.example.org/debian bookworm main",
      "deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main",
      "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://ftp.fr.debian.org/debian bookworm main",
    ].join("\n");
    assert.equal(mirrorInSources([list]), "http://ftp.fr.debian.org/debian");
  });

  it("finds none where no Debian archive is listed", () => {
    assert.equal(
      mirrorInSources(["deb https://packages.cloud.google.com/apt cloud-sdk main\n", ""]),
      undefined,
    );
  });
});
