# syntax=docker/dockerfile:1
# The operator image for people with a container engine. It is the equivalent of the image
# `npm run image` writes without one (src/testenv/node/images/operator.ts): a distroless base (glibc,
# libstdc++, CA certificates, time zones, user nonroot 65532; no shell, no package manager), the same
# Node.js release, production node_modules only, the compiled dist/src, helm and a charts directory
# for the gitlab target.
#   docker build -t platform-operator:dev .
#
# GitLab's charts: the gitlab target renders the chart version a GitLabCore asks for from
# HELM_CHARTS (/app/charts) and pulls only what is missing there (ENABLE_DYNAMIC_CHART_PULL). Name
# the versions to bundle at build time; each is fetched from the chart repository and, with a
# keyring, verified against its .prov signature before it goes into the image:
#   docker build -t platform-operator:dev \
#     --build-arg GITLAB_CHART_VERSIONS="9.11.2 10.0.0 10.1.2" \
#     --secret id=chart-keyring,src=gitlab-charts.pubring.gpg .
# With no versions the charts directory is empty and every version comes from the repository. The
# test image bundles the fixture charts (test/fixtures/charts/gitlab) the same way, as
# gitlab-<version>.tgz files.

# OPERATOR_NODE_VERSION in src/testenv/lts-node.ts.
ARG NODE_VERSION=24.22.3
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY test ./test
COPY bench ./bench
RUN npx tsc -p tsconfig.json && npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# helm at the version the tests pin (HELM_VERSION in src/testenv/helm.ts), built from its published
# Go module; static, so it runs in the slim image as it is.
FROM golang:1.26-bookworm AS helm
ARG HELM_VERSION=v3.22.0
RUN CGO_ENABLED=0 GOBIN=/out go install -trimpath -buildvcs=false \
      -ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}" \
      "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"

FROM helm AS charts
ARG GITLAB_CHART_REPOSITORY=https://charts.gitlab.io
ARG GITLAB_CHART_VERSIONS=""
RUN --mount=type=secret,id=chart-keyring,required=false \
    mkdir -p /charts && \
    verify="" && if [ -s /run/secrets/chart-keyring ]; then \
      verify="--verify --keyring /run/secrets/chart-keyring"; fi && \
    for v in ${GITLAB_CHART_VERSIONS}; do \
      /out/helm pull gitlab --repo "${GITLAB_CHART_REPOSITORY}" --version "$v" --destination /charts $verify \
        || exit 1; \
    done && rm -f /charts/*.prov

# Debian 12's libc6, libgcc-s1, libstdc++6, ca-certificates, tzdata and netbase, and nonroot (65532):
# the packages src/testenv/node/images/distroless.ts unpacks.
FROM gcr.io/distroless/cc-debian12:nonroot
# MALLOC_ARENA_MAX: what the chart sets (RUNTIME_ENV in src/cli/heap.ts says why), for any other way
# of starting the image.
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    NODE_ENV=production \
    HELM_BINARY=/usr/local/bin/helm \
    HELM_CHARTS=/app/charts \
    MALLOC_ARENA_MAX=1
WORKDIR /app
COPY --from=build /usr/local/bin/node /usr/local/bin/node
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=helm /out/helm /usr/local/bin/helm
COPY --from=charts /charts ./charts
COPY --from=build /src/dist/src ./dist/src
COPY deploy ./deploy
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/node", "/app/dist/src/cli/main.js"]
