#!/usr/bin/env bash
# Retrieval quality of deferred-mode search on every retrieval set (bench/sets/README.md), side by
# side, then the BFCL pooled set in detail (the design note deferred.md). Downloads into the
# git-ignored .cache/bench (never committed): the PyPI packages bfcl-eval and nestful-wrapper
# (NESTFUL, converted by scripts/retrieval-public-sets.py for the nestful set) and the npm package
# @octokit/openapi (GitHub's REST API description, for the github-rest set); fetches the
# sentence-embedding model and builds its version tuned for tool search (scripts/fetch-model.sh
# and `--tuned`: 10 to 30 minutes the first time, as measured on different VMs); runs
# `cargo run --release --features embeddings --example bench_sets` and `... --example
# bench_retrieval`, and writes bench/retrieval.md. About 15 minutes more on a 2-core machine the first
# time (every tool of every set is embedded; the vectors are then kept in .cache/bench).
#
#   bash scripts/bench-retrieval.sh                  # the pinned versions
#   BFCL_EVAL_VERSION=2026.3.23 bash scripts/bench-retrieval.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=${BFCL_EVAL_VERSION:-2026.3.23}
cache=.cache/bench/bfcl-eval-$version
data=$cache/whl/bfcl_eval/data

if [ ! -f "$data/BFCL_v4_simple_python.json" ]; then
  mkdir -p "$cache"
  python3 -m pip download --quiet --no-deps --disable-pip-version-check "bfcl-eval==$version" -d "$cache"
  wheel=$(ls "$cache"/bfcl_eval-*.whl | head -n 1)
  python3 -m zipfile -e "$wheel" "$cache/whl"
fi

# The github-rest set's catalog: the version its task file names.
octokit=$(python3 -c 'import json; print(json.load(open("bench/sets/github-rest.tasks.json"))["catalog"]["version"])')
spec=.cache/bench/octokit-$octokit/package/generated/api.github.com.json
if [ ! -f "$spec" ]; then
  mkdir -p ".cache/bench/octokit-$octokit"
  npm pack --silent --pack-destination ".cache/bench/octokit-$octokit" "@octokit/openapi@$octokit" >/dev/null
  tar -xzf ".cache/bench/octokit-$octokit"/octokit-openapi-*.tgz -C ".cache/bench/octokit-$octokit" \
    package/generated/api.github.com.json
  rm -f ".cache/bench/octokit-$octokit"/octokit-openapi-*.tgz
fi

# The nestful set: NESTFUL as the PyPI package nestful-wrapper ships it (version and SHA-256
# pinned in the script), converted to the format of bench/sets/mcp-servers.json.
nestful=.cache/bench/nestful-wrapper-0.1.7/nestful.json
if [ ! -f "$nestful" ]; then
  python3 scripts/retrieval-public-sets.py nestful --out "$nestful"
fi

model=$(bash scripts/fetch-model.sh)
tuned=$(bash scripts/fetch-model.sh --tuned)

mkdir -p bench
{
  echo "# Deferred search: retrieval quality"
  echo
  echo "\`bash scripts/bench-retrieval.sh\` (downloads the data into \`.cache/bench\` and the model into"
  echo "\`.cache/models\`, then runs \`examples/bench_sets.rs\` and \`examples/bench_retrieval.rs\`)."
  echo "The sets and how they were made: \`bench/sets/README.md\`."
  echo "Leave-one-set-out figures (every default chosen on the other sets, reported on the set left out): \`bench/retrieval-loso.md\`."
  echo
  cargo run --quiet --release --features embeddings --example bench_sets -- \
    --bfcl "$data" --github-spec "$spec" --nestful "$nestful" --model "$model" --also-model "$tuned"
  echo
  # Each set's figure with the settings chosen on the other five beside its tuned one: the grid
  # of bench/retrieval-loso.md, its first table.
  echo "## Left out beside tuned (\`bench_sets --loso\`; the grid, the criterion and the analysis: \`bench/retrieval-loso.md\`)"
  echo
  echo "The published model (\`fetch-model.sh\`); the recommended one (\`fetch-model.sh --tuned\`), which"
  echo "meets 0.75 / 0.60 left out on every set, is in \`bench/retrieval-loso.md\`."
  echo
  ./target/release/examples/bench_sets --loso --bfcl "$data" --github-spec "$spec" --nestful "$nestful" \
    --model "$model" | awk '/^[0-9]+ points/ { print; print ""; next }
      /^\| set \| default/ { n++ } n == 1 && /^\|/ { print } /^Mean criterion/ && n == 1 { print ""; print; exit }'
  echo
  echo "## Start-up of a served catalog (\`scripts/bench-catalog-startup.py\`, the mcp-servers tools)"
  echo
  cargo build --quiet --release --features embeddings --example catalog
  python3 scripts/bench-catalog-startup.py --write-catalog .cache/bench/mcp-servers-catalog.json \
    --tasks bench/sets/mcp-servers.json .cache/bench/mcp-servers-catalog.json "$model"
  echo
  # The runs measured before, by hand (the table above is this run's).
  sed -e '/^<!--/,/-->$/d' bench/retrieval-startup-notes.md | sed -e '/./,$!d'
  echo
  cargo run --quiet --release --features embeddings --example bench_retrieval -- \
    --data "$data" --label "bfcl-eval $version" --model "$model" | sed -e '1,/^## The rankers/{/^## The rankers/!d}' \
    -e 's/^## The rankers/# The BFCL pooled set in detail\n\n## The rankers/'
} > bench/retrieval.md.tmp
mv bench/retrieval.md.tmp bench/retrieval.md
cat bench/retrieval.md
