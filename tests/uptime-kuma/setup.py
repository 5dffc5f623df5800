"""Sets up a fresh Uptime Kuma for tests/alerts/uptime_kuma.rs through its own socket API (uptime-kuma-api).

It creates the first user, a Webhook notification posting Uptime Kuma's JSON preset to svcgate's receiving
address with the integration's key as a Bearer header, sends that notification's test message once, and adds an
HTTP monitor of the target (tagged env=<environment>, no retries, the shortest interval Uptime Kuma accepts) with
that notification. It returns once the monitor's first check has seen the target up, and prints one JSON object:
{"monitor_id", "notification_id", "test"} (test: Uptime Kuma's answer to the test message).

Usage: setup.py KUMA_URL WEBHOOK_URL KEY TARGET_URL MONITOR_NAME ENVIRONMENT
"""

import json
import sys
import time

from uptime_kuma_api import MonitorStatus, MonitorType, NotificationType, UptimeKumaApi

USER = "svcgate"
PASSWORD = "svcgate-test-password-1"
# Uptime Kuma refuses a shorter interval (MIN_INTERVAL_SECOND in its src/util.ts).
INTERVAL_SECONDS = 20


def main(kuma_url, webhook_url, key, target_url, monitor_name, environment):
    api = UptimeKumaApi(kuma_url, timeout=30)
    try:
        api.setup(USER, PASSWORD)
        api.login(USER, PASSWORD)
        webhook = dict(
            name="svcgate",
            type=NotificationType.WEBHOOK,
            isDefault=False,
            webhookURL=webhook_url,
            webhookContentType="json",
            webhookAdditionalHeaders=json.dumps({"Authorization": f"Bearer {key}"}),
        )
        test = api.test_notification(**webhook)
        notification_id = api.add_notification(**webhook)["id"]
        monitor_id = api.add_monitor(
            type=MonitorType.HTTP,
            name=monitor_name,
            url=target_url,
            interval=INTERVAL_SECONDS,
            retryInterval=INTERVAL_SECONDS,
            maxretries=0,
            timeout=5,
            notificationIDList=[notification_id],
        )["monitorID"]
        tag_id = api.add_tag(name="env", color="#059669")["id"]
        api.add_monitor_tag(tag_id=tag_id, monitor_id=monitor_id, value=environment)
        deadline = time.monotonic() + 30
        while True:
            # Uptime Kuma pushes each heartbeat to the signed-in socket (its getMonitorBeats fails on SQLite).
            heartbeats = api.get_heartbeats()
            beats = heartbeats.get(monitor_id, []) if isinstance(heartbeats, dict) else []
            if any(beat["status"] == MonitorStatus.UP for beat in beats):
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"the monitor's first check never saw the target up: {beats}")
            time.sleep(0.2)
        print(json.dumps({"monitor_id": monitor_id, "notification_id": notification_id, "test": test}))
    finally:
        api.disconnect()


if __name__ == "__main__":
    if len(sys.argv) != 7:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
