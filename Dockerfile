# The operator image for people with a container engine. It is the equivalent of the image the test
# harness writes without one (src/testenv/node/images/operator.ts): the same Node.js LTS line,
# production node_modules only, the compiled dist/src, and a non-root user (65532).
#   docker build -t platform-operator:dev .

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY test ./test
COPY bench ./bench
RUN npx tsc -p tsconfig.json && npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY deploy ./deploy
USER 65532:65532
ENTRYPOINT ["node", "/app/dist/src/cli/main.js"]
