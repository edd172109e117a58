# product-sync: one image for the worker, the console, the CLI and the sandbox (pick with the command).
# Build stage: full install, typecheck and compile (a broken tree fails the image build); run stage: production
# dependencies only, non-root, running the sources through tsx like `npx product-sync` (static files stay beside them).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json vitest.config.ts ./
COPY src ./src
COPY test ./test
COPY bench ./bench
RUN npm run typecheck && npm run build

FROM node:22-bookworm-slim AS run
ENV NODE_ENV=production \
    REPORT_DIR=/data/reports \
    UPLOAD_DIR=/data/uploads
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY mappings ./mappings
COPY jobs ./jobs
COPY samples ./samples
RUN mkdir -p /data/reports /data/uploads && chown -R node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 4010
HEALTHCHECK --interval=30s --timeout=5s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(0))"
ENTRYPOINT ["node", "bin/product-sync.mjs"]
CMD ["worker"]
