#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
exec "$(dirname "$0")/group.sh" stress
