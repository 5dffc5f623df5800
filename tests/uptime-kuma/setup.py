"""Sets up a fresh Uptime Kuma for tests/alerts/uptime_kuma.rs through its own socket API (uptime-kuma-api).

It creates the first user, a Webhook notification posting Uptime Kuma's JSON preset to svcgate's receiving
address with the integration's key as a Bearer header, and, given a second address and key, one posting the
multipart/form-data preset there (the same JSON as the form's `data` field). It sends each notification's test
message once, and adds an HTTP monitor of the target (tagged env=<environment>, no retries, the shortest interval
Uptime Kuma accepts) with the notifications. It returns once the monitor's first check has seen the target up,
and prints one JSON object: {"monitor_id", "notification_id", "test", "form_test"} (test and form_test: Uptime
Kuma's answers to the test messages; form_test is null without a second address).

Usage: setup.py KUMA_URL WEBHOOK_URL KEY TARGET_URL MONITOR_NAME ENVIRONMENT [FORM_WEBHOOK_URL FORM_KEY]
"""

import json
import sys
import time

from uptime_kuma_api import MonitorStatus, MonitorType, NotificationType, UptimeKumaApi

USER = "svcgate"
PASSWORD = "svcgate-test-password-1"
# Uptime Kuma refuses a shorter interval (MIN_INTERVAL_SECOND in its src/util.ts).
INTERVAL_SECONDS = 20


def webhook(name, url, key, content_type):
    """A Webhook notification posting Uptime Kuma's `content_type` preset ("json" or "form-data") to `url`."""
    return dict(
        name=name,
        type=NotificationType.WEBHOOK,
        isDefault=False,
        webhookURL=url,
        webhookContentType=content_type,
        webhookAdditionalHeaders=json.dumps({"Authorization": f"Bearer {key}"}),
    )


def main(kuma_url, webhook_url, key, target_url, monitor_name, environment, form_webhook_url=None, form_key=None):
    api = UptimeKumaApi(kuma_url, timeout=30)
    try:
        api.setup(USER, PASSWORD)
        api.login(USER, PASSWORD)
        as_json = webhook("svcgate", webhook_url, key, "json")
        test = api.test_notification(**as_json)
        notification_id = api.add_notification(**as_json)["id"]
        notifications = [notification_id]
        form_test = None
        if form_webhook_url is not None:
            as_form = webhook("svcgate form", form_webhook_url, form_key, "form-data")
            form_test = api.test_notification(**as_form)
            notifications.append(api.add_notification(**as_form)["id"])
        monitor_id = api.add_monitor(
            type=MonitorType.HTTP,
            name=monitor_name,
            url=target_url,
            interval=INTERVAL_SECONDS,
            retryInterval=INTERVAL_SECONDS,
            maxretries=0,
            timeout=5,
            notificationIDList=notifications,
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
        print(json.dumps({"monitor_id": monitor_id, "notification_id": notification_id, "test": test,
                          "form_test": form_test}))
    finally:
        api.disconnect()


if __name__ == "__main__":
    if len(sys.argv) not in (7, 9):
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
