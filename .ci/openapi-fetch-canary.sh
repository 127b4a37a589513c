#!/usr/bin/env bash
# The upgrade canary of openapi-fetch: the clients lean on how openapi-fetch builds and sends its
# request (src/clients/transport.ts signs last over the exact bytes), so the newest release is
# installed into a scratch folder and the clients are type-checked and tested against it. A break
# shows here before anyone moves the pin in package.json.
#
#   bash .ci/openapi-fetch-canary.sh [VERSION]     (default: latest)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-latest}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/paylater-canary.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
echo '{"name":"openapi-fetch-canary","private":true}' > "$scratch/package.json"
npm install --prefix "$scratch" --no-audit --no-fund --no-save --silent "openapi-fetch@$version"
pinned=$(node -p "require('./package.json').dependencies['openapi-fetch']")
tried=$(node -p "require('$scratch/node_modules/openapi-fetch/package.json').version")
echo "openapi-fetch canary: $tried (pinned: $pinned)"

# The clients' types against that release: the project's compiler options, openapi-fetch mapped to it.
cat > "$scratch/tsconfig.json" <<JSON
{
  "extends": "$PWD/tsconfig.json",
  "compilerOptions": { "baseUrl": "$PWD", "typeRoots": ["$PWD/node_modules/@types"], "paths": { "openapi-fetch": ["$scratch/node_modules/openapi-fetch"] } },
  "include": ["$PWD/src/clients", "$PWD/test/clients"]
}
JSON
npx --no -- tsc --noEmit -p "$scratch/tsconfig.json"

# The clients' tests against it (vitest.config.ts aliases openapi-fetch to the folder named here).
PAYLATER_OPENAPI_FETCH_CANARY="$scratch" npx --no -- vitest run test/clients
