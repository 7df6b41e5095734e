/// The notifications service's OpenAPI 3.1 document, served at GET /notifications/v1/openapi.json
/// and checked against the registered routes by the tests.
enum NotificationsOpenAPI {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Colony notifications service",
    "version": "1.0.0",
    "description": "Device tokens, Live Activity tokens, notification preferences, the in-app notification list and the delivery log, for every app: the access token's app (its audience) scopes everything, so a MyCirclee token sees MyCirclee's tokens and notifications only. Pushes come from the domain services' events and go to APNs over HTTP/2; recipients never include the user who acted. A token belongs to the newest user who registers it. Times are ISO 8601 in UTC with milliseconds; ids are UUIDs; JSON keys are snake_case. Errors are `{code, message}`. Notification kinds per app — mycirclee: `circle_post`, `dm`, `event_rsvp`, `presence` (silent, for widgets), `event_activity` (Live Activity updates); unify: `group_message`; habithive: `hive_advanced`, `streak_milestone`, `hive_at_risk`, `hive_joined`; ibelieveinyou: `support_message`, `new_follower`; socialspot: none yet."
  },
  "servers": [{"url": "/"}],
  "security": [{"bearer": []}],
  "tags": [
    {"name": "Meta"},
    {"name": "Devices", "description": "The caller's push tokens for this app."},
    {"name": "Live Activities", "description": "MyCirclee's upcoming-event Live Activities."},
    {"name": "Preferences"},
    {"name": "Notifications", "description": "The in-app list."},
    {"name": "Deliveries", "description": "What was pushed where, for support."}
  ],
  "paths": {
    "/notifications/v1/openapi.json": {
      "get": {
        "operationId": "getOpenAPIDocument",
        "tags": ["Meta"],
        "summary": "This OpenAPI document",
        "description": "Public: no token needed.",
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OpenAPIDocument"}}}}},
        "security": []
      }
    },
    "/notifications/v1/devices": {
      "get": {
        "operationId": "listDevices",
        "tags": ["Devices"],
        "summary": "The caller's tokens for this app (installs and Live Activities)",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeviceList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "post": {
        "operationId": "registerDevice",
        "tags": ["Devices"],
        "summary": "Register (or refresh) this install's APNs device token",
        "description": "Idempotent. A token already registered by another user of the app moves to the caller, and whatever was still queued for the previous user is dropped. Call it on every launch: `updated_at` tells APNs' 410 answers for tokens re-registered since apart.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeviceRegistration"}}}},
        "responses": {
          "200": {"description": "The registered token", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Device"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {"$ref": "#/components/responses/Invalid"}
        }
      }
    },
    "/notifications/v1/devices/{token}": {
      "delete": {
        "operationId": "unregisterDevice",
        "tags": ["Devices"],
        "summary": "Unregister a device token (sign-out)",
        "description": "Pushes still queued for it are dropped.",
        "parameters": [{"name": "token", "in": "path", "required": true, "description": "The APNs token in hex.", "schema": {"type": "string"}}],
        "responses": {
          "204": {"description": "Unregistered"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"description": "The caller has no such token in this app (`device_not_found`).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        }
      }
    },
    "/notifications/v1/live-activities": {
      "post": {
        "operationId": "registerLiveActivity",
        "tags": ["Live Activities"],
        "summary": "Register an upcoming-event Live Activity's push token (MyCirclee)",
        "description": "The event post must be one the caller can see (a member of its circle) and not over. The activity then gets `update` pushes when RSVPs or the event change, one when the event begins (`content-state.started` true), and an `end` an hour after the start or when the post is deleted or expires. ActivityKit may hand the app a new token for the same activity: registering it replaces the old one. `content-state`: `post_id`, `title`, `location`, `starts_at` (ISO 8601), `going`, `maybe`, `declined`, and `started` once begun. Topic: `<bundle id>.push-type.liveactivity`.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LiveActivityRegistration"}}}},
        "responses": {
          "200": {"description": "The registered activity token", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Device"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"description": "No upcoming event by this id that the caller can see (`event_not_found`).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "422": {"$ref": "#/components/responses/Invalid"}
        }
      }
    },
    "/notifications/v1/live-activities/{activity_id}": {
      "delete": {
        "operationId": "unregisterLiveActivity",
        "tags": ["Live Activities"],
        "summary": "Forget a Live Activity's token (the user ended it)",
        "parameters": [{"name": "activity_id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {
          "204": {"description": "Forgotten"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"description": "The caller has no such activity (`activity_not_found`).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        }
      }
    },
    "/notifications/v1/preferences": {
      "get": {
        "operationId": "getPreferences",
        "tags": ["Preferences"],
        "summary": "Which kinds the caller wants, and quiet hours",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Preferences"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "patch": {
        "operationId": "updatePreferences",
        "tags": ["Preferences"],
        "summary": "Switch kinds on or off; set or remove quiet hours",
        "description": "Only what is sent changes. `kinds` maps kind names of the token's app to true/false. During quiet hours (a daily window in the given IANA time zone; it may cross midnight) alert pushes are held and delivered when the window ends; they still appear in the in-app list at once. Silent pushes and Live Activity updates are not held. `\"quiet_hours\": null` removes them.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PreferencesPatch"}}}},
        "responses": {
          "200": {"description": "The preferences now", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Preferences"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {"$ref": "#/components/responses/Invalid"}
        }
      }
    },
    "/notifications/v1/notifications": {
      "get": {
        "operationId": "listNotifications",
        "tags": ["Notifications"],
        "summary": "The in-app notification list, newest first",
        "parameters": [
          {"name": "cursor", "in": "query", "required": false, "description": "`next_cursor` of the previous page.", "schema": {"type": "string"}},
          {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 30}}
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NotificationPage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {"$ref": "#/components/responses/Invalid"}
        }
      }
    },
    "/notifications/v1/notifications/{notification_id}/read": {
      "post": {
        "operationId": "markNotificationRead",
        "tags": ["Notifications"],
        "summary": "Mark one notification read",
        "parameters": [{"name": "notification_id", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}],
        "responses": {
          "200": {"description": "The unread count now", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UnreadCount"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"description": "The caller has no such notification (`notification_not_found`).", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        }
      }
    },
    "/notifications/v1/notifications/read-all": {
      "post": {
        "operationId": "markAllNotificationsRead",
        "tags": ["Notifications"],
        "summary": "Mark every notification of this app read",
        "responses": {
          "200": {"description": "The unread count now (0)", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UnreadCount"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/notifications/v1/deliveries": {
      "get": {
        "operationId": "listDeliveries",
        "tags": ["Deliveries"],
        "summary": "The caller's delivery log for this app, newest first",
        "description": "One entry per push and token: `pending` (queued, held for quiet hours until `held_until`, or waiting to retry), `sent` (APNs accepted it), `failed` (APNs refused it, or retries ran out; `last_status` and `last_reason` are APNs' answer), `dropped` (the token went or moved, or the push expired), `skipped` (APNs is not configured). `id` is the `apns-id` the push was sent with. Operators read any user's log with `colony-notifications deliveries USER_ID`.",
        "parameters": [{"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}}],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/DeliveryLog"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {"$ref": "#/components/responses/Invalid"}
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "A Colony access token of any app."}
    },
    "responses": {
      "MalformedJSON": {
        "description": "The body is not JSON (`malformed_json`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "Unauthorized": {
        "description": "Missing token (`unauthorized`), an invalid token (`invalid_token`), an expired token (`token_expired`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "Invalid": {
        "description": "Invalid fields (`validation_failed`): a token that is not hex, an unknown environment or platform, an unknown notification kind for the app, quiet hours that are not HH:MM or an unknown time zone, a limit out of range, a cursor not given out by this service.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      }
    },
    "schemas": {
      "Error": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
          "code": {"type": "string", "description": "Stable machine-readable code, e.g. `device_not_found`."},
          "message": {"type": "string", "description": "For people; may change."}
        }
      },
      "OpenAPIDocument": {
        "type": "object",
        "required": ["openapi", "info", "paths"],
        "properties": {"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"}}
      },
      "DeviceRegistration": {
        "type": "object",
        "required": ["token"],
        "properties": {
          "token": {"type": "string", "description": "The APNs device token in hex (32–200 hex digits; case ignored)."},
          "environment": {"type": "string", "enum": ["sandbox", "production"], "default": "production", "description": "Development builds get sandbox tokens."},
          "platform": {"type": "string", "enum": ["ios", "ipados", "watchos", "macos"], "default": "ios"},
          "app_version": {"type": "string", "maxLength": 32},
          "locale": {"type": "string", "description": "A language tag, e.g. `de-DE`."}
        }
      },
      "LiveActivityRegistration": {
        "type": "object",
        "required": ["activity_id", "post_id", "token"],
        "properties": {
          "activity_id": {"type": "string", "description": "ActivityKit's `Activity.id`."},
          "post_id": {"type": "string", "format": "uuid", "description": "The MyCirclee event post."},
          "token": {"type": "string", "description": "The activity's push token in hex."},
          "environment": {"type": "string", "enum": ["sandbox", "production"], "default": "production"}
        }
      },
      "Device": {
        "type": "object",
        "required": ["id", "app", "kind", "token", "environment", "platform", "created_at", "updated_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "app": {"type": "string"},
          "kind": {"type": "string", "enum": ["device", "live_activity"]},
          "token": {"type": "string"},
          "environment": {"type": "string", "enum": ["sandbox", "production"]},
          "platform": {"type": "string"},
          "app_version": {"type": "string"},
          "locale": {"type": "string"},
          "activity_id": {"type": "string"},
          "post_id": {"type": "string", "format": "uuid"},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "DeviceList": {
        "type": "object",
        "required": ["devices"],
        "properties": {"devices": {"type": "array", "items": {"$ref": "#/components/schemas/Device"}}}
      },
      "QuietHours": {
        "type": "object",
        "required": ["start", "end", "timezone"],
        "properties": {
          "start": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$", "description": "HH:MM, local time."},
          "end": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$", "description": "HH:MM, local time; before start: the window crosses midnight."},
          "timezone": {"type": "string", "description": "IANA time zone, e.g. `Europe/Berlin`."}
        }
      },
      "Preferences": {
        "type": "object",
        "required": ["kinds", "quiet_hours"],
        "properties": {
          "kinds": {"type": "object", "additionalProperties": {"type": "boolean"}, "description": "Every kind of the app: true when wanted."},
          "quiet_hours": {"oneOf": [{"$ref": "#/components/schemas/QuietHours"}, {"type": "null"}]}
        }
      },
      "PreferencesPatch": {
        "type": "object",
        "properties": {
          "kinds": {"type": "object", "additionalProperties": {"type": "boolean"}},
          "quiet_hours": {"oneOf": [{"$ref": "#/components/schemas/QuietHours"}, {"type": "null"}]}
        }
      },
      "Notification": {
        "type": "object",
        "required": ["id", "kind", "title", "body", "data", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid", "description": "Also in the push's payload as `notification_id`."},
          "kind": {"type": "string"},
          "title": {"type": "string"},
          "body": {"type": "string"},
          "data": {"type": "object", "description": "The ids the app opens the right screen with (`circle_id`, `post_id`, `thread_id`, `group_id`, `message_id`, `hive_id`, `project_id`, …)."},
          "created_at": {"type": "string", "format": "date-time"},
          "read_at": {"type": "string", "format": "date-time"}
        }
      },
      "NotificationPage": {
        "type": "object",
        "required": ["notifications", "unread_count"],
        "properties": {
          "notifications": {"type": "array", "items": {"$ref": "#/components/schemas/Notification"}},
          "unread_count": {"type": "integer"},
          "next_cursor": {"type": "string", "description": "Absent on the last page."}
        }
      },
      "UnreadCount": {
        "type": "object",
        "required": ["unread_count"],
        "properties": {"unread_count": {"type": "integer"}}
      },
      "Delivery": {
        "type": "object",
        "required": ["id", "event_id", "app", "kind", "push_type", "status", "attempts", "token_suffix", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid", "description": "The `apns-id` of the push."},
          "event_id": {"type": "string", "format": "uuid", "description": "The domain event that made it."},
          "app": {"type": "string"},
          "kind": {"type": "string"},
          "push_type": {"type": "string", "enum": ["alert", "background", "liveactivity"]},
          "status": {"type": "string", "enum": ["pending", "sent", "failed", "dropped", "skipped"]},
          "attempts": {"type": "integer"},
          "last_status": {"type": "integer", "description": "APNs' HTTP status of the last try."},
          "last_reason": {"type": "string", "description": "APNs' reason (`Unregistered`, `BadDeviceToken`, …) or ours (`token_moved`, `expired`, …)."},
          "token_suffix": {"type": "string", "description": "The token's last 8 hex digits."},
          "held_until": {"type": "string", "format": "date-time", "description": "Held for quiet hours until then."},
          "created_at": {"type": "string", "format": "date-time"},
          "sent_at": {"type": "string", "format": "date-time"}
        }
      },
      "DeliveryLog": {
        "type": "object",
        "required": ["deliveries"],
        "properties": {"deliveries": {"type": "array", "items": {"$ref": "#/components/schemas/Delivery"}}}
      }
    }
  }
}
"""#
}
