#!/usr/bin/env bash
# `make images-test`: the container images and docker-compose.yml, tried on a
# real Docker engine as an operator would, then torn down:
#
#   1. the base images (pulled, or built offline by scripts/base-images.sh
#      when a registry is unreachable);
#   2. `compose build`, then `compose up -d` in a project of its own
#      (algoitny-images-test) with the API published on IMAGES_TEST_PORT;
#   3. every container without `privileged` or added capabilities, the api
#      healthy (= ready), migrate exited 0, the published URL in the api's log;
#   4. the worker announcing every language of internal/judge/languages.json;
#   5. README.md's "Try it" snippets against the containers, the staff grant
#      through `compose exec api algoitny admin grant`;
#   6. one accepted submission per language (the judge table's own A+B
#      program of each), judged by the worker container;
#   7. `compose down -v` (KEEP=1 leaves the stack running).
#
# Needs docker (20.10 or later), Compose (`docker compose` or docker-compose
# 1.29), curl and jq. Not part of `make test`: building the worker image
# installs every compiler (minutes, about 2 GB).
set -euo pipefail
cd "$(dirname "$0")/.."

port=${IMAGES_TEST_PORT:-25080}
export COMPOSE_PROJECT_NAME=${IMAGES_TEST_PROJECT:-algoitny-images-test}
export ALGOITNY_PORT=$port ALGOITNY_DEV=true # devLogin and the playground, as "Try it" needs
SESSION_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
export SESSION_SECRET
API=http://localhost:$port/query
langfile=internal/judge/languages.json

start=$SECONDS
step() { printf '\n== [%4ds] %s\n' $((SECONDS - start)) "$*"; }
die() {
	printf 'images-test: FAIL: %s\n' "$*" >&2
	exit 1
}
for tool in docker curl jq; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done
if docker compose version >/dev/null 2>&1; then
	compose=(docker compose)
elif command -v docker-compose >/dev/null; then
	compose=(docker-compose)
else
	die "neither 'docker compose' nor docker-compose is installed (apt-get install -y docker-compose)"
fi
docker info >/dev/null 2>&1 || die "no Docker engine answers (start dockerd)"
container() { docker ps -aq --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" --filter "label=com.docker.compose.service=$1" | head -n1; }

teardown() {
	rc=$?
	if ((rc != 0)); then
		step "logs (the test failed)"
		"${compose[@]}" logs --no-color --tail=40 2>&1 || true
	fi
	if [[ "${KEEP:-0}" == 1 ]]; then
		step "KEEP=1: the stack keeps running (${compose[*]} -p $COMPOSE_PROJECT_NAME down -v to remove it)"
	else
		step "teardown: ${compose[*]} down -v"
		"${compose[@]}" down -v --remove-orphans --timeout 20 2>&1 | sed 's/^/  /' || true
	fi
	if ((rc == 0)); then
		printf '\nimages-test: PASS in %ds\n' $((SECONDS - start))
	else
		printf '\nimages-test: FAIL (exit %d) after %ds\n' "$rc" $((SECONDS - start))
	fi
}
trap teardown EXIT

step "engine: $(docker version --format 'Docker {{.Server.Version}}'), compose: $("${compose[@]}" version --short 2>/dev/null || "${compose[@]}" version | head -n1)"
step "base images"
missing=()
for img in debian:bookworm-slim golang:1.26-bookworm postgres:15-bookworm amazon/dynamodb-local:latest; do
	docker image inspect "$img" >/dev/null 2>&1 || missing+=("$img")
done
if ((${#missing[@]} > 0)); then
	echo "missing: ${missing[*]}"
	if [[ "${IMAGES_TEST_PULL:-0}" == 1 ]]; then
		for img in "${missing[@]}"; do docker pull -q "$img"; done
	else
		scripts/base-images.sh
	fi
else
	echo "present: debian:bookworm-slim golang:1.26-bookworm postgres:15-bookworm amazon/dynamodb-local:latest"
fi

step "a clean project: ${compose[*]} -p $COMPOSE_PROJECT_NAME down -v"
"${compose[@]}" down -v --remove-orphans >/dev/null 2>&1 || true

step "${compose[*]} build"
t0=$SECONDS
"${compose[@]}" build 2>&1 | grep -E '^(Step [0-9]+/[0-9]+ : FROM|Successfully tagged|Building [a-z-]+$)' | sed 's/^/  /'
echo "  built in $((SECONDS - t0)) s"
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^${COMPOSE_PROJECT_NAME}_" | sed 's/^/  /' || true

step "${compose[*]} up -d (API published on $port)"
t0=$SECONDS
"${compose[@]}" up -d 2>&1 | sed 's/^/  /'
api=$(container api)
[[ -n "$api" ]] || die "no api container"
health=
for ((i = 0; i < 180; i++)); do
	health=$(docker inspect -f '{{.State.Health.Status}}' "$api")
	[[ "$health" == healthy ]] && break
	[[ "$(docker inspect -f '{{.State.Status}}' "$api")" == exited ]] && die "the api container exited"
	sleep 2
done
[[ "$health" == healthy ]] || die "the api is not healthy after 360 s: $health"
echo "  api healthy after $((SECONDS - t0)) s"
migrate=$(container migrate)
[[ "$(docker inspect -f '{{.State.ExitCode}}' "$migrate")" == 0 ]] || die "migrate did not exit 0"
echo "  migrate exited 0"
echo "  readyz: $(curl -fsS "http://localhost:$port/readyz")"
"${compose[@]}" ps 2>&1 | sed 's/^/  /'

step "least privilege: what each container runs with"
for svc in dynamodb postgres migrate api worker; do
	id=$(container "$svc")
	[[ -n "$id" ]] || die "no $svc container"
	docker inspect "$id" | jq -r --arg svc "$svc" '.[0] |
		"  \($svc): privileged=\(.HostConfig.Privileged) user=\(.Config.User | if . == "" then "root" else . end)" +
		" cap_add=\(.HostConfig.CapAdd // [] | join(","))" +
		" security_opt=\([.HostConfig.SecurityOpt // [] | .[] | if startswith("seccomp=") then "seccomp=<deploy/seccomp-worker.json>" else . end] | join(","))" +
		" ulimits=\(.HostConfig.Ulimits // [] | map("\(.Name)=\(.Soft):\(.Hard)") | join(","))"'
	[[ "$(docker inspect -f '{{.HostConfig.Privileged}}' "$id")" == false ]] || die "$svc is privileged"
	[[ "$(docker inspect -f '{{len .HostConfig.CapAdd}}' "$id")" == 0 ]] || die "$svc adds capabilities"
done
wuser=$(docker inspect -f '{{.Config.User}}' "$(container worker)")
[[ -n "$wuser" && "$wuser" != root && "$wuser" != 0 && "$wuser" != 0:* ]] || die "the worker runs as root"
aopen=$(docker exec "$api" sh -c 'cat /proc/1/limits' | awk '/Max open files/ {print $4 " soft / " $5 " hard"}')
echo "  api open files: $aopen (serve raised its soft limit to the hard one)"

step "the api's warnings at start"
docker logs "$api" 2>&1 | grep '"level":"WARN"' | jq -r '"  \(.msg)\(if .err then ": " + .err else "" end)"' || echo "  none"

step "the worker image under Docker's defaults: the sandbox refuses to start, and says which setting is missing"
wimage=$(docker inspect -f '{{.Image}}' "$(container worker)")
out=$(docker run --rm "$wimage" judge --languages 2>&1) && die "the sandbox started under Docker's default seccomp profile"
grep -q 'seccomp profile' <<<"$out" || die "no word of the seccomp profile: $out"
echo "  default profile: $(grep -o 'bubblewrap does not work here.*' <<<"$out" | cut -c1-160)…"
out=$(docker run --rm --security-opt seccomp=deploy/seccomp-worker.json "$wimage" judge --languages 2>&1) &&
	die "the sandbox mounted /proc under Docker's masked /proc"
grep -q 'fully visible procfs' <<<"$out" || die "no word of the procfs: $out"
echo "  our profile, masked /proc: $(grep -o 'bubblewrap does not work here.*' <<<"$out" | cut -c1-160)…"

step "the playground URL the api logs is the published one"
logged=$(docker logs "$api" 2>&1 | grep -E '^playground: ' | tail -n1)
echo "  $logged"
[[ "$logged" == "playground: http://localhost:$port/playground" ]] || die "the api logs '$logged', not the published URL"
curl -fsS -o /dev/null -w '  GET /playground: %{http_code}\n' "http://localhost:$port/playground"

step "the worker announces every language of $langfile"
want=$(jq -r '[.languages[].id | ascii_upcase] | sort | join(" ")' "$langfile")
got=
t0=$SECONDS
for ((i = 0; i < 300; i++)); do
	got=$(curl -fsS "$API" -H 'Content-Type: application/json' -d '{"query": "{ languages { id } }"}' |
		jq -r '[.data.languages[].id] | sort | join(" ")')
	[[ "$got" == "$want" ]] && break
	[[ "$(docker inspect -f '{{.State.Status}}' "$(container worker)")" == running ]] || die "the worker container stopped"
	sleep 2
done
[[ "$got" == "$want" ]] || die "the worker announces [$got], want [$want]"
echo "  after $((SECONDS - t0)) s:"
curl -fsS "$API" -H 'Content-Type: application/json' -d '{"query": "{ languages { id version } }"}' |
	jq -r '.data.languages[] | "    \(.id): \(.version)"'

step "the worker's judge warms every toolchain before it takes executions (JUDGE_WARM)"
t0=$SECONDS
for ((i = 0; i < 300; i++)); do
	docker logs "$(container worker)" 2>&1 | grep -q '"msg":"judge warm-up done"' && break
	sleep 2
done
docker logs "$(container worker)" 2>&1 | grep -q '"msg":"judge warm-up done"' || die "the worker's warm-up did not end in 600 s"
docker logs "$(container worker)" 2>&1 | grep -E '"msg":"judge warm(ed|-up done|-up failed)"' |
	jq -r '"  \(.msg) \(.language // "") \(.ms) ms\(if .err then " " + .err else "" end)"' 2>/dev/null || true
echo "  after $((SECONDS - t0)) s more"

step "README.md: Try it, against the containers (bin/algoitny = ${compose[*]} exec -T api algoitny)"
work=$(mktemp -d)
mkdir -p "$work/bin"
printf '#!/bin/sh\ncd %q && exec %s exec -T api algoitny "$@"\n' "$PWD" "${compose[*]}" >"$work/bin/algoitny"
chmod +x "$work/bin/algoitny"
awk '/^## Try it$/ {on = 1; next} on && /^## / {exit} on && /^```sh$/ {code = 1; next} code && /^```$/ {code = 0; next} code {print}' README.md >"$work/try-it.sh"
echo "  $(grep -c . "$work/try-it.sh") lines of snippets"
t0=$SECONDS
out=$(cd "$work" && PATH="$work/bin:$PATH" API=$API \
	timeout 600 bash -euo pipefail try-it.sh 2>&1) || {
	printf '%s\n' "$out" | sed 's/^/  | /'
	die "the Try it snippets failed"
}
printf '%s\n' "$out" | cut -c1-200 | sed 's/^/  | /'
for want in "you@example.com is staff now" '"createProblem":{' '"testCaseCount":2' '"status":"COMPLETED"' \
	'"verdict":"WRONG_ANSWER"' '"hints":["' '{"action":"EXECUTION","used":1,' '{"action":"HINT","used":1,'; do
	grep -qF -- "$want" <<<"$out" || die "the Try it output has no $want"
done
echo "  passed in $((SECONDS - t0)) s"
rm -rf "$work"

step "one accepted submission per language, judged by the worker container"
gql() {
	curl -fsS "$API" -H 'Content-Type: application/json' ${TOKEN:+-H "Authorization: Bearer $TOKEN"} -d "$1"
}
TOKEN=
TOKEN=$(gql '{"query": "mutation { devLogin(email: \"you@example.com\") { token } }"}' | jq -r '.data.devLogin.token')
me=$(gql '{"query": "{ me { id } }"}' | jq -r '.data.me.id')
# The Free plan allows 10 executions a day; the staff user moves itself to Admin.
gql "$(jq -nc --arg id "$me" '{query: "mutation($id: ID!) { setUserPlan(userId: $id, plan: \"Admin\") { plan { name } } }", variables: {id: $id}}')" |
	jq -r '"  plan: \(.data.setUserPlan.plan.name // .)"'
declare -A jobs
for id in $(jq -r '.languages[].id' "$langfile"); do
	body=$(jq -c --arg id "$id" '.languages[] | select(.id == $id) |
		{query: "mutation($in: ExecuteCodeInput!) { executeCode(input: $in) { id status } }",
		 variables: {in: {platform: "CUSTOM", problemId: "a-plus-b", language: (.id | ascii_upcase), code: .warm}}}' "$langfile")
	resp=$(gql "$body")
	jobs[$id]=$(jq -r '.data.executeCode.id // empty' <<<"$resp")
	[[ -n "${jobs[$id]}" ]] || die "executeCode in $id: $resp"
done
echo "  ${#jobs[@]} submissions queued"
t0=$SECONDS
failed=0
for id in $(jq -r '.languages[].id' "$langfile"); do
	q=$(jq -nc --arg id "${jobs[$id]}" '{query: "query($id: ID!) { job(id: $id) { status errorMessage history { verdict passedCount totalCount maxTimeMs compileMessage } } }", variables: {id: $id}}')
	res=
	for ((i = 0; i < 300; i++)); do
		res=$(gql "$q")
		jq -e '.data.job.status | IN("COMPLETED", "FAILED", "CANCELLED")' <<<"$res" >/dev/null && break
		sleep 1
	done
	line=$(jq -r '.data.job | "\(.status) \(.history.verdict // "-") \(.history.passedCount // 0)/\(.history.totalCount // 0) tests, max \(.history.maxTimeMs // "-") ms\(if (.errorMessage // "") != "" then " error: " + .errorMessage else "" end)\(if (.history.compileMessage // "") != "" then " compile: " + (.history.compileMessage | .[0:300]) else "" end)"' <<<"$res")
	printf '  %-11s %s\n' "$id" "$line"
	# Every test of a-plus-b passed (Try it's two and saveProblem's generated ones).
	jq -e '.data.job | .status == "COMPLETED" and .history.verdict == "ACCEPTED" and .history.totalCount > 0 and
		.history.passedCount == .history.totalCount' <<<"$res" >/dev/null || failed=$((failed + 1))
done
((failed == 0)) || die "$failed languages were not ACCEPTED"
echo "  all $(jq '.languages | length' "$langfile") languages ACCEPTED in $((SECONDS - t0)) s"
