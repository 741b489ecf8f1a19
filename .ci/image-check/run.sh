#!/usr/bin/env bash
# Builds the API image from a clean tree of a commit and starts it, without a Docker engine: buildah bud with the
# vfs storage driver and chroot isolation (works as root, no daemon), then buildah run with the host's network
# against a private Redis and MariaDB on loopback (scripts/services.sh). Passes when the image
#   - builds (every module the parent pom lists is in the build: a missing one fails here),
#   - runs as a non-root uid, exits on OutOfMemoryError, names its AOT cache and starts with half the container's
#     memory as heap (its entrypoint says so), has the jar in layers,
#   - fills the database as compose's `seed` does (SPRING_PROFILES_ACTIVE=generate, same image),
#   - starts from that AOT cache (the API's JVM runs with -XX:AOTMode=on: one that refuses the cache, trained with
#     other JVM options than the entrypoint's, exits),
#   - becomes ready on the management port, its own JIT warm-up included (it prints how long that took from the
#     start of the container's JVM: the target is 25 s, ADR 0202), and serves /api/concerts with Cache-Status, a hit
#     the second time,
#   - refuses DELETE /actuator/caches without the admin token (401).
# Base images come from base-images.sh (Debian's JDK and JRE; the official ones cannot be pulled here), made once
# per machine and passed through the Dockerfile's BUILD_BASE and RUNTIME_BASE arguments.
#
# Usage: .ci/image-check/run.sh [--build-only | --built] [COMMIT]     (default HEAD; exit status non-zero on any failure)
#   --build-only  builds the image and stops; --built then checks and starts that image of the same commit without
#                 building it again (scripts/test.sh builds in the background while other tiers run)
# Environment: IMAGE_CHECK_DOCKERFILE (api/Dockerfile), IMAGE_CHECK_READY_SECONDS (300),
#              IMAGE_CHECK_WARMUP (concert-cache.warmup.max-duration; default the image's own: the warm-up ends
#              concert-cache.warmup.ready-within after the JVM started, ADR 0202).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}"
steps=build,start
case ${1:-} in
  --build-only) steps=build; shift ;;
  --built) steps=start; shift ;;
esac
commit="$(git -C "$root" rev-parse --verify "${1:-HEAD}^{commit}")"
dockerfile="${IMAGE_CHECK_DOCKERFILE:-api/Dockerfile}"
ready_seconds="${IMAGE_CHECK_READY_SECONDS:-300}"
image="localhost/concert-cache/api:image-check"
# The commit an image was built from, as a label: --built refuses an image of another commit.
commit_label=dev.concertcache.image-check.commit
started=$SECONDS

for tool in buildah debootstrap redis-server curl python3; do
  command -v "$tool" >/dev/null || { echo "image-check: $tool is missing (apt-get install buildah debootstrap redis-server curl)" >&2; exit 1; }
done

fail() { echo "image-check: FAIL $*" >&2; exit 1; }

work="$(mktemp -d /var/tmp/concert-cache-image-check.XXXXXX)"
containers=()
# shellcheck source=../../scripts/services.sh
source "$root/scripts/services.sh"
cleanup() {
  local c
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  stop_services
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ $steps == *build* ]]; then
  eval "$(bash "$here/base-images.sh")"
  echo "image-check: base images $BUILD_BASE, $RUNTIME_BASE ($((SECONDS - started)) s)"
  # A clean tree: what the commit holds, nothing of this checkout's build output or uncommitted files.
  mkdir "$work/src"
  git -C "$root" archive "$commit" | tar -x -C "$work/src"
  echo "image-check: building $dockerfile of $(git -C "$root" rev-parse --short "$commit")"
  build_started=$SECONDS
  # --layers keeps one layer per instruction, as Docker does (without it buildah squashes each stage into one). With
  # vfs every layer is a full copy of the filesystem, so the untagged images a build leaves go afterwards; the part
  # worth keeping between runs, the Maven repository, lives in the Dockerfile's cache mount.
  buildah rmi "$image" >/dev/null 2>&1 || true
  buildah bud --isolation chroot --layers --force-rm --pull=missing \
    --build-arg BUILD_BASE="$BUILD_BASE" --build-arg RUNTIME_BASE="$RUNTIME_BASE" --label "$commit_label=$commit" \
    -f "$work/src/$dockerfile" -t "$image" "$work/src" >"$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log" >&2; fail "the image does not build (log above)"; }
  echo "image-check: built $image ($((SECONDS - build_started)) s)"
  buildah rmi --prune >/dev/null 2>&1 || true
fi
[[ $steps == *start* ]] || exit 0

# config EXPRESSION: a Python expression over the image's OCI configuration (c) and root filesystem (rootfs).
config() {
  buildah inspect --type image "$image" | python3 -c '
import json, sys
image = json.load(sys.stdin)["OCIv1"]
c, rootfs = image["config"], image["rootfs"]
print(eval(sys.argv[1]))' "$1"
}
buildah inspect --type image "$image" >/dev/null 2>&1 || fail "there is no $image (build it first: --build-only)"
built_from="$(config 'c.get("Labels", {}).get("'"$commit_label"'", "")')"
[[ $built_from == "$commit" ]] || fail "$image was built from ${built_from:-an unlabelled tree}, not from $commit"
user="$(config 'c.get("User", "")')"
[[ -n $user && ${user%%:*} != 0 && ${user%%:*} != root ]] || fail "the image runs as root (USER '$user')"
entrypoint="$(config 'json.dumps(c.get("Entrypoint") or [])')"
[[ $entrypoint == *'"@/app/jvm.options"'* ]] || fail "the entrypoint $entrypoint does not read the service's JVM options"
[[ $entrypoint == *'-XX:AOTCache='* ]] || fail "the entrypoint $entrypoint starts without an AOT cache"
[[ $entrypoint == *'-XX:InitialRAMPercentage='* ]] ||
  fail "the entrypoint $entrypoint starts with G1's small default heap (ADR 0209)"
# The base's, the user's, and one per layer of the jar (dependencies, loader, snapshots, application).
layers="$(config 'len(rootfs["diff_ids"])')"
((layers >= 6)) || fail "$layers layers: the jar is not split into its layers"
echo "image-check: user $user, entrypoint $entrypoint, $layers layers"

start_redis
start_mariadb
api_port="$(free_port)"
management_port="$(free_port)"
admin_token="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"

# run_image NAME LOG [ARG...]: the image's entrypoint with ARGs appended, as `docker run IMAGE ARG...` would run
# it, with the image's user and environment and the host's network; in the background. Sets run_pid.
run_image() {
  local name=$1 log=$2; shift 2
  local container
  container="$(buildah from --pull-never --name "concert-cache-image-check-$name-$$" "$image")"
  containers+=("$container")
  local command
  mapfile -t command < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])))' "$entrypoint")
  buildah run --isolation chroot --network host --user "$user" "${run_env[@]}" "$container" -- \
    "${command[@]}" "$@" >"$log" 2>&1 &
  run_pid=$!
}

datasource_env=(--env "SPRING_DATASOURCE_URL=$DB_JDBC_URL" --env SPRING_DATASOURCE_USERNAME=concert
  --env SPRING_DATASOURCE_PASSWORD=concert)

# The JVM options the entrypoint reads are the commit's api/jvm.options (exit on OOM among them).
options="$(buildah from --pull-never --name "concert-cache-image-check-options-$$" "$image")"
containers+=("$options")
diff <(buildah run --isolation chroot "$options" -- cat /app/jvm.options) <(git -C "$root" show "$commit:api/jvm.options") \
  || fail "the image's /app/jvm.options is not the commit's api/jvm.options"
grep -qx -- '-XX:+ExitOnOutOfMemoryError' <(git -C "$root" show "$commit:api/jvm.options") \
  || fail "api/jvm.options does not exit on OOM"

# compose's seed: the same image under the generate profile fills the database and exits.
run_env=("${datasource_env[@]}" --env SPRING_PROFILES_ACTIVE=generate)
seed_started=$SECONDS
run_image seed "$work/seed.log" --concert-cache.generate.concerts=200 --concert-cache.generate.seed=42
wait "$run_pid" || { tail -40 "$work/seed.log" >&2; fail "the image's generate profile failed"; }
echo "image-check: seeded 200 concerts ($((SECONDS - seed_started)) s)"

# compose's api: the image's default profile (cache) with Redis and the binlog capture.
run_env=("${datasource_env[@]}" --env SPRING_DATA_REDIS_HOST=127.0.0.1 --env "SPRING_DATA_REDIS_PORT=$REDIS_PORT"
  --env "SERVER_PORT=$api_port" --env "MANAGEMENT_SERVER_PORT=$management_port"
  --env "CONCERT_CACHE_ADMIN_TOKEN=$admin_token" --env "CONCERT_CACHE_CURSOR_SECRET=image-check-$$")
[[ -z ${IMAGE_CHECK_WARMUP:-} ]] || run_env+=(--env "CONCERT_CACHE_WARMUP_MAX_DURATION=$IMAGE_CHECK_WARMUP")
# A JVM that cannot use the AOT cache (trained with other options than the entrypoint's) exits at once.
run_env+=(--env JAVA_TOOL_OPTIONS=-XX:AOTMode=on)
api_started=$SECONDS
run_image api "$work/api.log"
api_pid=$run_pid
service_track api "$api_pid"
ready=""
while ((SECONDS - api_started < ready_seconds)); do
  if [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$management_port/actuator/health/readiness") == 200 ]]; then
    ready=$((SECONDS - api_started))
    break
  fi
  kill -0 "$api_pid" 2>/dev/null || { tail -40 "$work/api.log" >&2; fail "the API exited before it was ready"; }
  sleep 1
done
[[ -n $ready ]] || { tail -40 "$work/api.log" >&2; fail "the API was not ready within $ready_seconds s"; }
# From the container's start to ready, to the second; the log says what the JVM's own start and warm-up took.
echo "image-check: ready in $ready s (target: at most 25 s on 2 cores; load average $(cut -d' ' -f1 /proc/loadavg))"
grep -E 'Started ApiApplication|Warm-up:' "$work/api.log" | sed 's/^.*: /image-check:   /' || true

cache_status() {
  curl -sS -o "$work/body.json" -D "$work/headers.txt" -w '%{http_code}' "http://127.0.0.1:$api_port/api/concerts?size=5" \
    >"$work/status.txt"
  [[ $(cat "$work/status.txt") == 200 ]] || fail "GET /api/concerts answered $(cat "$work/status.txt")"
  grep -i '^cache-status:' "$work/headers.txt" | tr -d '\r' | cut -d' ' -f2-
}
first="$(cache_status)"
second="$(cache_status)"
[[ -n $first ]] || fail "GET /api/concerts has no Cache-Status header"
[[ $second == *hit* ]] || fail "the second GET /api/concerts was not a hit (Cache-Status: $second)"
python3 -c 'import json, sys; body = json.load(open(sys.argv[1])); assert body["items"], body' "$work/body.json" \
  || fail "GET /api/concerts returned no concerts"
echo "image-check: GET /api/concerts: Cache-Status $first, then $second"

unauthorized="$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "http://127.0.0.1:$management_port/actuator/caches")"
[[ $unauthorized == 401 ]] || fail "DELETE /actuator/caches without the admin token answered $unauthorized"
authorized="$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $admin_token" \
  "http://127.0.0.1:$management_port/actuator/caches")"
[[ $authorized == 204 ]] || fail "DELETE /actuator/caches with the admin token answered $authorized"
echo "image-check: DELETE /actuator/caches: 401 without the admin token, 204 with it"

echo "image-check: OK ($((SECONDS - started)) s)"
