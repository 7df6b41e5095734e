import ColonyStorage

/// What notifications exports of a user (`user_export_requested`, of every app): the push tokens
/// of their devices, their preferences, the notifications sent to them and the log of pushes to
/// their devices. An account belongs to one app, so its id selects that app's rows alone. The
/// texts of notifications stay out: they quote other people (names, messages, posts). It keeps
/// no files.
enum NotificationsExport {
    static let plan = ExportPlan(
        service: .notifications,
        about: "Push notifications: the devices you registered for them, your notification settings, the notifications sent to you "
            + "and the log of pushes to your devices. Their texts are left out, as they quote other people; each says what it was about by kind and ids.",
        tables: [
            ExportTable("devices", about: "Your devices' push tokens, and those of the Live Activities you followed.", sql: """
                SELECT id, app, kind, token, environment, platform, app_version, locale, activity_id, post_id, created_at, updated_at
                FROM devices WHERE user_id = $1 ORDER BY created_at, id
                """, fields: [
                    "id": "The registration's id.",
                    "app": "The app it is for.",
                    "kind": "device (an install of the app) or live_activity (one Live Activity on your lock screen).",
                    "token": "The push token Apple gave your device: the address pushes to it are sent to.",
                    "environment": "Apple's push environment: production or sandbox (test builds).",
                    "platform": "The device's platform (ios).",
                    "app_version": "The app's version when it registered.",
                    "locale": "The device's language and region when it registered.",
                    "activity_id": "A Live Activity's id on the device.",
                    "post_id": "The event post a Live Activity follows.",
                    "created_at": "When it was first registered.",
                    "updated_at": "When it was last registered again.",
                ]),
            ExportTable("preferences", about: "Your notification settings.", sql: """
                SELECT app, disabled_kinds, quiet_start, quiet_end, timezone, updated_at FROM preferences WHERE user_id = $1 ORDER BY app
                """, fields: [
                    "app": "The app they are for.",
                    "disabled_kinds": "The kinds of notification you switched off.",
                    "quiet_start": "When your quiet hours begin, in minutes after midnight; empty without quiet hours.",
                    "quiet_end": "When your quiet hours end, in minutes after midnight.",
                    "timezone": "The time zone your quiet hours are in.",
                    "updated_at": "When you last changed them.",
                ]),
            ExportTable("notifications", about: "The notifications sent to you (your in-app list), without their texts.", sql: """
                SELECT id, app, kind, event_id, actor_id, data, created_at, read_at FROM notifications WHERE user_id = $1 ORDER BY created_at, id
                """, fields: [
                    "id": "The notification's id.",
                    "app": "The app it came from.",
                    "kind": "What it was about (a post, a message, an RSVP, a hive's streak, a follower, a report you filed, a moderator's warning…).",
                    "event_id": "The id of what happened that caused it.",
                    "actor_id": "The id of the person whose action caused it; empty when nobody acted (a warning that a hive is at risk, say).",
                    "data": "The ids the app opened the right screen with (the circle, group, hive or project, the post or message).",
                    "created_at": "When it was sent.",
                    "read_at": "When you read it; empty while unread.",
                ]),
            ExportTable("deliveries", about: "The log of pushes to your devices: one row per push and device, kept for a limited time.", sql: """
                SELECT id, event_id, device_id, app, kind, push_type, status, attempts, last_status, last_reason, token_suffix, held_until, created_at, sent_at
                FROM deliveries WHERE user_id = $1 ORDER BY created_at, id
                """, fields: [
                    "id": "The push's id (Apple's apns-id).",
                    "event_id": "The id of what happened that caused it.",
                    "device_id": "The registration (in devices) it went to; empty once that was removed.",
                    "app": "The app it was for.",
                    "kind": "What it was about, as in notifications.",
                    "push_type": "alert (shown), background (silent) or liveactivity (a Live Activity update).",
                    "status": "pending, sent, failed, dropped or skipped (pushes not configured).",
                    "attempts": "How many times it was tried.",
                    "last_status": "Apple's last answer's HTTP status.",
                    "last_reason": "Apple's last reason for refusing it, or why it was dropped.",
                    "token_suffix": "The last digits of the device's push token.",
                    "held_until": "Until when it was held for your quiet hours.",
                    "created_at": "When it was queued.",
                    "sent_at": "When Apple accepted it.",
                ]),
        ],
        // The platform's tables (`ExportPlan.platformTables`) are covered already; `memberships`
        // has a reason of its own here.
        notExported: [
            "memberships": "a copy of who belongs to which group, circle and hive, from the services that own them (their parts list yours)",
            "names": "names of circles, groups and projects for push texts: nothing about a person",
            "event_posts": "a copy of MyCirclee's event posts for event alerts; circles' part holds the posts you wrote",
            "suspended_accounts": "a copy of a suspension of your account, so that no push is sent during it, kept until it ends; auth's part has the suspension",
        ]
    )
}
