#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run wpstat.clients.RocketmqAppend (RocketMQ's store, pinned in
# java/pom.xml) with the classes and jars of `make clients-build` and the
# JDK 17 flags RocketMQ needs: it reaches sun.nio.ch.DirectBuffer (mlock of
# mapped files and pool buffers) and the buffers' cleaner (munmap).
# Arguments go to the driver; JSON lines on stdout, RocketMQ's warnings on
# stderr.  JNA unpacks its native library under $TMPDIR (the guest's root
# is read-only).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/clients/java
[ -d "$out/classes" ] && [ -d "$out/lib" ] ||
	{ echo "rocketmq-run.sh: $out is not built (make clients-build)" >&2; exit 2; }
tmp=${TMPDIR:-/tmp}
exec java -Xms256m -Xmx256m -XX:+UseSerialGC \
	--add-exports java.base/sun.nio.ch=ALL-UNNAMED \
	--add-opens java.base/java.nio=ALL-UNNAMED \
	--add-opens java.base/sun.nio.ch=ALL-UNNAMED \
	--add-opens java.base/jdk.internal.ref=ALL-UNNAMED \
	--add-opens java.base/java.lang=ALL-UNNAMED \
	-Djna.tmpdir="$tmp" -Djava.io.tmpdir="$tmp" \
	-Duser.home="$tmp" \
	-Drocketmq.client.logUseSlf4j=true \
	-Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
	-cp "$out/classes:$out/lib/*" wpstat.clients.RocketmqAppend "$@"
