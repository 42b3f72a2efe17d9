#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run wpstat.clients.RocketmqAppend (RocketMQ's store, pinned in
# java/pom.xml) through jrun.sh (classpath, JDK 17 flags), with what
# RocketMQ adds: a fixed small heap, jdk.internal.ref opened (the cleaner of
# mapped and pool buffers), and JNA, the logs and user.home under $TMPDIR
# (the guest's root is read-only).  Arguments go to the driver; JSON lines
# on stdout, RocketMQ's warnings on stderr.
set -euo pipefail
tmp=${TMPDIR:-/tmp}
export JAVA_OPTS="-Xms256m -Xmx256m -XX:+UseSerialGC
	--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
	-Djna.tmpdir=$tmp -Djava.io.tmpdir=$tmp -Duser.home=$tmp
	-Drocketmq.client.logUseSlf4j=true
	-Dorg.slf4j.simpleLogger.defaultLogLevel=warn ${JAVA_OPTS:-}"
exec "$(dirname "$0")/jrun.sh" wpstat.clients.RocketmqAppend "$@"
