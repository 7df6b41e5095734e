/// The habits service's OpenAPI 3.1 document, served at GET /habits/v1/openapi.json and checked
/// against the registered routes by the tests.
enum HabitsOpenAPI {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Colony habits service (HabitHive)",
    "version": "1.0.0",
    "description": "HabitHive's habits, hives, insights and contacts. Only access tokens of the habithive app are accepted. All times are ISO 8601 in UTC with milliseconds; days are user-local YYYY-MM-DD dates. JSON keys are snake_case; optional fields without a value are left out. Every write accepts an `Idempotency-Key` header (1–255 printable characters): a replay returns the stored answer with the header `Idempotent-Replayed: true`, and the same key with a different request is 422 `idempotency_key_reused`. Errors are `{code, message}`."
  },
  "servers": [{"url": "/"}],
  "security": [{"bearer": []}],
  "paths": {
    "/habits/v1/openapi.json": {
      "get": {
        "operationId": "getOpenAPIDocument",
        "summary": "This OpenAPI document",
        "description": "Public: no token needed.",
        "parameters": [],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OpenAPIDocument"}}}
          }
        },
        "security": []
      }
    },
    "/habits/v1/profile": {
      "get": {
        "operationId": "getProfile",
        "summary": "The caller's profile",
        "description": "Created on first use with defaults (timezone UTC, day_start_hour 0, theme honey).",
        "parameters": [],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Profile"}}}},
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "patch": {
        "operationId": "updateProfile",
        "summary": "Update the caller's profile",
        "description": "Only the fields sent change; `avatar_url: null` clears the avatar. The timezone and day_start_hour define the user-local day: the wall-clock date in `timezone` after subtracting `day_start_hour` hours. All problems are reported at once (422).",
        "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProfileUpdate"}}}},
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Profile"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Invalid field values (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/habits": {
      "get": {
        "operationId": "listHabits",
        "summary": "The caller's habits",
        "parameters": [
          {
            "name": "include_archived",
            "in": "query",
            "description": "Include archived (inactive) habits.",
            "schema": {"type": "boolean", "default": false}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HabitList"}}}},
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "createHabit",
        "summary": "Create a habit",
        "description": "A checkbox habit has target_per_day 1; a counter habit counts up to target_per_day (1–1000) per day. schedule_weekmask: bit 0 = Monday … bit 6 = Sunday (127 = every day); only scheduled days count for streaks and completion.",
        "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HabitCreate"}}}},
        "responses": {
          "201": {
            "description": "Created",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Habit"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Invalid fields (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/habits/{habit_id}": {
      "get": {
        "operationId": "getHabit",
        "summary": "One habit",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Habit"}}}},
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "patch": {
        "operationId": "updateHabit",
        "summary": "Update a habit",
        "description": "Only the fields sent change; the result is validated as a whole, as on create.",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HabitUpdate"}}}},
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Habit"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Invalid fields (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteHabit",
        "summary": "Delete a habit and its logs",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "responses": {
          "204": {
            "description": "Done; no body.",
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "The `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/habits/{habit_id}/archive": {
      "post": {
        "operationId": "archiveHabit",
        "summary": "Archive a habit",
        "description": "Sets is_active to false; archived habits are left out of GET /habits unless include_archived=true and out of overall insights.",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Habit"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "The `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/habits/{habit_id}/unarchive": {
      "post": {
        "operationId": "unarchiveHabit",
        "summary": "Unarchive a habit",
        "description": "Sets is_active to true.",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Habit"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "The `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/habits/{habit_id}/logs": {
      "post": {
        "operationId": "logHabit",
        "summary": "Log a habit for a day",
        "description": "One log per habit and user-local day (the wall-clock date in the profile's timezone after subtracting day_start_hour hours): logging again replaces that day's value. The value (default 1, at least 1) is capped at the habit's target_per_day. Without `date` the day is today, or the day containing `at` (for an offline queue; at most 5 minutes in the future). With `date` (from the month view) the day may be up to 365 days back but not in the future. An empty body logs 1 for today.",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "requestBody": {
          "required": false,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HabitLogRequest"}}}
        },
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HabitLog"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Invalid value, `at` in the future, or a day in the future or more than 365 days ago (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "get": {
        "operationId": "listHabitLogs",
        "summary": "A habit's logs",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {
            "name": "from",
            "in": "query",
            "description": "First day (inclusive), YYYY-MM-DD.",
            "schema": {"type": "string", "format": "date"}
          },
          {
            "name": "to",
            "in": "query",
            "description": "Last day (inclusive), YYYY-MM-DD.",
            "schema": {"type": "string", "format": "date"}
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HabitLogList"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "`from` or `to` is not YYYY-MM-DD (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/habits/{habit_id}/logs/{date}": {
      "delete": {
        "operationId": "deleteHabitLog",
        "summary": "Remove a day's log",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {
            "name": "date",
            "in": "path",
            "required": true,
            "description": "The user-local day, YYYY-MM-DD.",
            "schema": {"type": "string", "format": "date"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "responses": {
          "204": {
            "description": "Done; no body.",
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit (`habit_not_found`) or no log for that day (`log_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "`date` is not YYYY-MM-DD (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/habits/{habit_id}/insights": {
      "get": {
        "operationId": "getHabitInsights",
        "summary": "A habit's streaks, completion and heatmap",
        "description": "A day is done when its value reached target_per_day; only scheduled days count, and today not being done yet does not break the current streak. Completion covers the last 7 (week), 30 (month) and 365 (year) days; the heatmap has every day of `year`.",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {
            "name": "year",
            "in": "query",
            "description": "Heatmap year; default the caller's current year.",
            "schema": {"type": "integer", "minimum": 2000, "maximum": 2100}
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HabitInsights"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "`year` is not a number between 2000 and 2100 (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/habits/{habit_id}/hive": {
      "post": {
        "operationId": "convertHabitToHive",
        "summary": "Turn a habit into a hive",
        "description": "Creates a hive with the habit's type, target and schedule (name defaults to the habit's), the caller as owner and first member, and copies the habit's last `backfill_days` days of logs into the owner's hive days (0 copies nothing). An empty body uses the defaults.",
        "parameters": [
          {
            "name": "habit_id",
            "in": "path",
            "required": true,
            "description": "The habit's id (one of the caller's habits).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "requestBody": {"required": false, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveConvert"}}}},
        "responses": {
          "201": {
            "description": "Created",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveDetail"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such habit for the caller (`habit_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "`backfill_days` not 0 or 30–90, or name not 1–100 characters (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/insights": {
      "get": {
        "operationId": "getOverallInsights",
        "summary": "Completion across all active habits",
        "description": "Completion over the last 7, 30 and 365 days for all active habits together, and each habit's current streak and completion.",
        "parameters": [],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OverallInsights"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives": {
      "get": {
        "operationId": "listHives",
        "summary": "The caller's hives",
        "description": "Each with its member count and today's tally on the caller's day.",
        "parameters": [],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveSummaryList"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "createHive",
        "summary": "Create a hive",
        "description": "A hive is a group of 2–10 members keeping one shared streak; the caller becomes its owner and first member. The body is validated like a habit's (emoji and reminder_times are checked but not stored).",
        "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveCreate"}}}},
        "responses": {
          "201": {
            "description": "Created",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveDetail"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Invalid fields (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/join": {
      "post": {
        "operationId": "joinHive",
        "summary": "Join a hive with an invite code",
        "description": "The code is trimmed and lowercased. Refusals are checked in this order: expired, used up, already a member, hive full (10 members).",
        "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JoinRequest"}}}},
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveDetail"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "Unknown invite code (`invite_invalid`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "The invite expired (`invite_expired`) or is used up (`invite_exhausted`), the caller is already a member (`already_member`), or the hive has 10 members (`hive_full`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Invalid body (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/{hive_id}": {
      "get": {
        "operationId": "getHive",
        "summary": "A hive with its members",
        "description": "Each member's status is for their own current day; `today` is the tally on the caller's day. A non-member gets 404.",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveDetail"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteHive",
        "summary": "Delete a hive (owner only)",
        "description": "Members are told through the realtime feed.",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "responses": {
          "204": {
            "description": "Done; no body.",
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "403": {
            "description": "The caller is not the hive's owner (`owner_only`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "The `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/{hive_id}/logs": {
      "post": {
        "operationId": "logHiveToday",
        "summary": "Log the caller's day in a hive",
        "description": "Logs for the caller's user-local today (or the day containing `at`); a chosen `date` is refused. The value (default 1) is capped at the hive's target_per_day. The shared streak advances once for a day when every member is done on it; when the last member logs, the hive advances in the same request. A scheduled day that closes with someone not done resets the streak.",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "requestBody": {
          "required": false,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveLogRequest"}}}
        },
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveLogResult"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "That day of the hive is already closed (`day_closed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Invalid value, `at` in the future, or a `date` was sent (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/{hive_id}/days": {
      "get": {
        "operationId": "listHiveDays",
        "summary": "A hive's day tallies and member days",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {
            "name": "from",
            "in": "query",
            "description": "First day (inclusive).",
            "schema": {"type": "string", "format": "date"},
            "required": true
          },
          {
            "name": "to",
            "in": "query",
            "description": "Last day (inclusive); at most 366 days after `from`.",
            "schema": {"type": "string", "format": "date"},
            "required": true
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveDays"}}}},
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "`from`/`to` missing or not YYYY-MM-DD, `from` after `to`, or a range over 366 days (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/{hive_id}/advance": {
      "post": {
        "operationId": "advanceHive",
        "summary": "Check a day now (owner only)",
        "description": "Closes the days that have ended for every member, then re-checks `day` (default: the owner's today): it advances the shared streak if every member is done. For an already closed day, answers with what was recorded. An empty body checks today.",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "requestBody": {
          "required": false,
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AdvanceRequest"}}}
        },
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AdvanceResult"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "403": {
            "description": "The caller is not the hive's owner (`owner_only`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Invalid body (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/{hive_id}/leave": {
      "post": {
        "operationId": "leaveHive",
        "summary": "Leave a hive",
        "description": "The owner cannot leave; they delete the hive instead.",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "responses": {
          "204": {
            "description": "Done; no body.",
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "The caller owns the hive (`owner_cannot_leave`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "The `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/{hive_id}/members/{user_id}": {
      "delete": {
        "operationId": "removeHiveMember",
        "summary": "Remove a member (owner only)",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {
            "name": "user_id",
            "in": "path",
            "required": true,
            "description": "The member's user id.",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "responses": {
          "204": {
            "description": "Done; no body.",
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "403": {
            "description": "The caller is not the hive's owner (`owner_only`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive for the caller (`hive_not_found`) or no such member (`member_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "409": {
            "description": "The owner cannot be removed (`cannot_remove_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "The `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/{hive_id}/invites": {
      "get": {
        "operationId": "listHiveInvites",
        "summary": "A hive's invites",
        "description": "Any member may list them.",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveInviteList"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "createHiveInvite",
        "summary": "Create an invite code (owner only)",
        "description": "The code is 12 lowercase hex characters. ttl_minutes 1–43200 (default 10080, 7 days); max_uses 1–100 (default 20). An empty body uses the defaults.",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {"$ref": "#/components/parameters/IdempotencyKey"}
        ],
        "requestBody": {"required": false, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/InviteCreate"}}}},
        "responses": {
          "201": {
            "description": "Created",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HiveInvite"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "403": {
            "description": "The caller is not the hive's owner (`owner_only`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "ttl_minutes or max_uses out of range (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/hives/{hive_id}/activity": {
      "get": {
        "operationId": "listHiveActivity",
        "summary": "A hive's activity feed",
        "description": "Newest first. Pass `next_cursor` from a page as `before` for the next (older) page.",
        "parameters": [
          {
            "name": "hive_id",
            "in": "path",
            "required": true,
            "description": "The hive's id (a hive the caller is a member of).",
            "schema": {"type": "string", "format": "uuid"}
          },
          {
            "name": "before",
            "in": "query",
            "description": "An opaque cursor from a previous page's next_cursor.",
            "schema": {"type": "string"}
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Page size.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ActivityPage"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {
            "description": "No such hive, or the caller is not a member of it (`hive_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "`limit` not 1–100 or `before` not a cursor this service gave out (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/contacts/pepper": {
      "get": {
        "operationId": "getContactsPepper",
        "summary": "How to hash contacts",
        "description": "Clients hash each contact's E.164 phone number as lowercase hex SHA-256 of pepper ‖ number, the same hash kept for each account's phone.",
        "parameters": [],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PepperInfo"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/contacts": {
      "post": {
        "operationId": "uploadContacts",
        "summary": "Upload hashed contacts and get matches",
        "description": "At most 5000 contacts per upload; each hash is 64 lowercase hex characters. Uploads add to (and rename) earlier ones. Answers with the other users whose phone hash is among all the caller's contacts.",
        "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ContactsUpload"}}}},
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ContactMatches"}}},
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`) or a body that is not JSON (`malformed_json`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "Over 5000 contacts, a hash that is not 64 lowercase hex characters, or a display_name over 200 characters (`validation_failed`); or the `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteContacts",
        "summary": "Forget all uploaded contacts",
        "parameters": [{"$ref": "#/components/parameters/IdempotencyKey"}],
        "responses": {
          "204": {
            "description": "Done; no body.",
            "headers": {"Idempotent-Replayed": {"$ref": "#/components/headers/IdempotentReplayed"}}
          },
          "400": {
            "description": "Invalid `Idempotency-Key` (`invalid_idempotency_key`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "422": {
            "description": "The `Idempotency-Key` was used with a different request (`idempotency_key_reused`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/habits/v1/contacts/matches": {
      "get": {
        "operationId": "listContactMatches",
        "summary": "Users among the caller's contacts",
        "parameters": [],
        "responses": {
          "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ContactMatches"}}}
          },
          "401": {
            "description": "Missing, invalid or expired token, a token of another app (`unauthorized`), or the account was deleted (`account_deleted`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
    "parameters": {
      "IdempotencyKey": {
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": "Makes the write safe to retry: a replay returns the stored answer.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 255}
      }
    },
    "headers": {
      "IdempotentReplayed": {
        "description": "`true` when this is a stored answer to an earlier request with the same Idempotency-Key.",
        "schema": {"type": "string", "enum": ["true"]}
      }
    },
    "schemas": {
      "Error": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
          "code": {"type": "string", "description": "Stable machine-readable code, e.g. `hive_not_found`."},
          "message": {"type": "string"}
        }
      },
      "OpenAPIDocument": {
        "type": "object",
        "description": "This document.",
        "required": ["openapi", "info", "paths"],
        "properties": {"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"}}
      },
      "Profile": {
        "type": "object",
        "required": ["id", "display_name", "timezone", "day_start_hour", "theme", "created_at", "updated_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "display_name": {"type": "string"},
          "avatar_url": {"type": ["string", "null"], "description": "Absent when not set."},
          "timezone": {"type": "string", "description": "IANA time zone, e.g. Europe/Berlin."},
          "day_start_hour": {"type": "integer", "minimum": 0, "maximum": 23},
          "theme": {"type": "string", "enum": ["honey", "mint", "night"]},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "ProfileUpdate": {
        "type": "object",
        "properties": {
          "display_name": {"type": "string", "minLength": 1, "maxLength": 60},
          "avatar_url": {"type": ["string", "null"], "maxLength": 2048, "description": "An http(s) URL; null clears it."},
          "timezone": {"type": "string", "description": "IANA time zone (Region/City, or UTC)."},
          "day_start_hour": {"type": "integer", "minimum": 0, "maximum": 23},
          "theme": {"type": "string", "enum": ["honey", "mint", "night"]}
        }
      },
      "HabitType": {"type": "string", "enum": ["checkbox", "counter"]},
      "Habit": {
        "type": "object",
        "required": [
          "id",
          "user_id",
          "name",
          "color_hex",
          "type",
          "target_per_day",
          "schedule_daily",
          "schedule_weekmask",
          "reminder_times",
          "is_active",
          "created_at",
          "updated_at"
        ],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "user_id": {"type": "string", "format": "uuid"},
          "name": {"type": "string", "minLength": 1, "maxLength": 100},
          "emoji": {"type": ["string", "null"], "maxLength": 8},
          "color_hex": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$", "description": "#RRGGBB"},
          "type": {"$ref": "#/components/schemas/HabitType"},
          "target_per_day": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "1 for a checkbox habit."},
          "schedule_daily": {"type": "boolean", "description": "true: every day counts; false: only the weekdays in schedule_weekmask."},
          "schedule_weekmask": {
            "type": "integer",
            "minimum": 1,
            "maximum": 127,
            "description": "Bit 0 = Monday … bit 6 = Sunday; 127 = every day."
          },
          "reminder_times": {
            "type": "array",
            "maxItems": 10,
            "items": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
            "description": "HH:MM (24-hour)."
          },
          "is_active": {"type": "boolean", "description": "false when archived."},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "HabitList": {"type": "array", "items": {"$ref": "#/components/schemas/Habit"}},
      "HabitCreate": {
        "type": "object",
        "required": ["name"],
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 100},
          "emoji": {"type": ["string", "null"], "maxLength": 8},
          "color_hex": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$", "description": "#RRGGBB", "default": "#FF9F1C"},
          "type": {"$ref": "#/components/schemas/HabitType", "default": "checkbox"},
          "target_per_day": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "1 for a checkbox habit.", "default": 1},
          "schedule_daily": {
            "type": "boolean",
            "description": "true: every day counts; false: only the weekdays in schedule_weekmask.",
            "default": true
          },
          "schedule_weekmask": {
            "type": "integer",
            "minimum": 1,
            "maximum": 127,
            "description": "Bit 0 = Monday … bit 6 = Sunday; 127 = every day.",
            "default": 127
          },
          "reminder_times": {
            "type": "array",
            "maxItems": 10,
            "items": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
            "description": "HH:MM (24-hour).",
            "default": []
          }
        }
      },
      "HabitUpdate": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 100},
          "emoji": {"type": ["string", "null"], "maxLength": 8},
          "color_hex": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$", "description": "#RRGGBB"},
          "type": {"$ref": "#/components/schemas/HabitType"},
          "target_per_day": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "1 for a checkbox habit."},
          "schedule_daily": {"type": "boolean", "description": "true: every day counts; false: only the weekdays in schedule_weekmask."},
          "schedule_weekmask": {
            "type": "integer",
            "minimum": 1,
            "maximum": 127,
            "description": "Bit 0 = Monday … bit 6 = Sunday; 127 = every day."
          },
          "reminder_times": {
            "type": "array",
            "maxItems": 10,
            "items": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
            "description": "HH:MM (24-hour)."
          }
        }
      },
      "HabitLogRequest": {
        "type": "object",
        "properties": {
          "value": {"type": "integer", "minimum": 1, "default": 1, "description": "Capped at target_per_day."},
          "at": {
            "type": "string",
            "format": "date-time",
            "description": "Log the day containing this time (offline queue); at most 5 minutes in the future."
          },
          "date": {"type": "string", "format": "date", "description": "Log this user-local day (today or up to 365 days back)."}
        }
      },
      "HabitLog": {
        "type": "object",
        "required": ["id", "habit_id", "user_id", "log_date", "value", "source", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "habit_id": {"type": "string", "format": "uuid"},
          "user_id": {"type": "string", "format": "uuid"},
          "log_date": {"type": "string", "format": "date"},
          "value": {"type": "integer", "minimum": 1},
          "source": {"type": "string", "enum": ["api", "manual"], "description": "manual when logged for a chosen date."},
          "created_at": {"type": "string", "format": "date-time"}
        }
      },
      "HabitLogList": {"type": "array", "items": {"$ref": "#/components/schemas/HabitLog"}},
      "Completion": {
        "type": "object",
        "description": "Done of scheduled days (today counts only once done).",
        "required": ["done", "scheduled"],
        "properties": {
          "done": {"type": "integer"},
          "scheduled": {"type": "integer"},
          "percent": {
            "type": ["number", "null"],
            "description": "done / scheduled × 100, one decimal; null or absent when nothing was scheduled."
          }
        }
      },
      "CompletionWindows": {
        "type": "object",
        "description": "The last 7, 30 and 365 days.",
        "required": ["week", "month", "year"],
        "properties": {
          "week": {"$ref": "#/components/schemas/Completion"},
          "month": {"$ref": "#/components/schemas/Completion"},
          "year": {"$ref": "#/components/schemas/Completion"}
        }
      },
      "HeatmapDay": {
        "type": "object",
        "required": ["date", "value", "done"],
        "properties": {"date": {"type": "string", "format": "date"}, "value": {"type": "integer"}, "done": {"type": "boolean"}}
      },
      "HabitInsights": {
        "type": "object",
        "required": ["habit_id", "today", "current_streak", "longest_streak", "completion", "year", "heatmap"],
        "properties": {
          "habit_id": {"type": "string", "format": "uuid"},
          "today": {"type": "string", "format": "date"},
          "current_streak": {"type": "integer"},
          "longest_streak": {"type": "integer"},
          "completion": {"$ref": "#/components/schemas/CompletionWindows"},
          "year": {"type": "integer"},
          "heatmap": {"type": "array", "items": {"$ref": "#/components/schemas/HeatmapDay"}}
        }
      },
      "HabitInsightSummary": {
        "type": "object",
        "required": ["habit_id", "name", "current_streak", "completion"],
        "properties": {
          "habit_id": {"type": "string", "format": "uuid"},
          "name": {"type": "string"},
          "emoji": {"type": ["string", "null"]},
          "current_streak": {"type": "integer"},
          "completion": {"$ref": "#/components/schemas/CompletionWindows"}
        }
      },
      "OverallInsights": {
        "type": "object",
        "required": ["today", "completion", "habits"],
        "properties": {
          "today": {"type": "string", "format": "date"},
          "completion": {"$ref": "#/components/schemas/CompletionWindows"},
          "habits": {"type": "array", "items": {"$ref": "#/components/schemas/HabitInsightSummary"}}
        }
      },
      "Hive": {
        "type": "object",
        "required": [
          "id",
          "name",
          "owner_id",
          "color_hex",
          "type",
          "target_per_day",
          "rule",
          "schedule_daily",
          "schedule_weekmask",
          "current_length",
          "created_at"
        ],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "name": {"type": "string"},
          "owner_id": {"type": "string", "format": "uuid"},
          "color_hex": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$", "description": "#RRGGBB"},
          "type": {"$ref": "#/components/schemas/HabitType"},
          "target_per_day": {"type": "integer"},
          "rule": {"type": "string", "description": "all_must_complete"},
          "threshold": {"type": ["integer", "null"]},
          "schedule_daily": {"type": "boolean"},
          "schedule_weekmask": {
            "type": "integer",
            "minimum": 1,
            "maximum": 127,
            "description": "Bit 0 = Monday … bit 6 = Sunday; 127 = every day."
          },
          "current_length": {"type": "integer", "description": "The shared streak."},
          "last_advanced_on": {"type": ["string", "null"], "format": "date"},
          "created_at": {"type": "string", "format": "date-time"}
        }
      },
      "HiveToday": {
        "type": "object",
        "description": "The tally on the caller's user-local today.",
        "required": ["date", "done", "required", "done_by_me"],
        "properties": {
          "date": {"type": "string", "format": "date"},
          "done": {"type": "integer", "description": "Members done on this day."},
          "required": {"type": "integer", "description": "Member count."},
          "done_by_me": {"type": "boolean"}
        }
      },
      "HiveSummary": {
        "type": "object",
        "required": ["hive", "member_count", "today"],
        "properties": {
          "hive": {"$ref": "#/components/schemas/Hive"},
          "member_count": {"type": "integer"},
          "today": {"$ref": "#/components/schemas/HiveToday"}
        }
      },
      "HiveSummaryList": {"type": "array", "items": {"$ref": "#/components/schemas/HiveSummary"}},
      "HiveMemberStatus": {
        "type": "object",
        "required": ["user_id", "display_name", "role", "joined_at", "today", "done_today"],
        "properties": {
          "user_id": {"type": "string", "format": "uuid"},
          "display_name": {"type": "string"},
          "avatar_url": {"type": ["string", "null"]},
          "role": {"type": "string", "enum": ["owner", "member"]},
          "joined_at": {"type": "string", "format": "date-time"},
          "today": {"type": "string", "format": "date", "description": "The member's own current day."},
          "done_today": {"type": "boolean"}
        }
      },
      "HiveDetail": {
        "type": "object",
        "required": ["hive", "members", "today"],
        "properties": {
          "hive": {"$ref": "#/components/schemas/Hive"},
          "members": {"type": "array", "items": {"$ref": "#/components/schemas/HiveMemberStatus"}},
          "today": {"$ref": "#/components/schemas/HiveToday"}
        }
      },
      "HiveCreate": {
        "type": "object",
        "description": "The hive's name and habit settings.",
        "required": ["name"],
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 100},
          "emoji": {"type": ["string", "null"], "maxLength": 8},
          "color_hex": {"type": "string", "pattern": "^#[0-9A-Fa-f]{6}$", "description": "#RRGGBB", "default": "#FF9F1C"},
          "type": {"$ref": "#/components/schemas/HabitType", "default": "checkbox"},
          "target_per_day": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "1 for a checkbox habit.", "default": 1},
          "schedule_daily": {
            "type": "boolean",
            "description": "true: every day counts; false: only the weekdays in schedule_weekmask.",
            "default": true
          },
          "schedule_weekmask": {
            "type": "integer",
            "minimum": 1,
            "maximum": 127,
            "description": "Bit 0 = Monday … bit 6 = Sunday; 127 = every day.",
            "default": 127
          },
          "reminder_times": {
            "type": "array",
            "maxItems": 10,
            "items": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
            "description": "HH:MM (24-hour).",
            "default": []
          }
        }
      },
      "HiveConvert": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "Default: the habit's name."},
          "backfill_days": {
            "type": "integer",
            "default": 30,
            "anyOf": [{"const": 0}, {"minimum": 30, "maximum": 90}],
            "description": "0, or 30–90 days of the habit's logs to copy."
          }
        }
      },
      "JoinRequest": {
        "type": "object",
        "required": ["code"],
        "properties": {"code": {"type": "string", "maxLength": 64, "description": "The invite code (12 hex characters)."}}
      },
      "HiveLogRequest": {
        "type": "object",
        "properties": {
          "value": {"type": "integer", "minimum": 1, "default": 1, "description": "Capped at the hive's target_per_day."},
          "at": {
            "type": "string",
            "format": "date-time",
            "description": "Log the day containing this time; at most 5 minutes in the future."
          }
        }
      },
      "HiveMemberDay": {
        "type": "object",
        "required": ["hive_id", "user_id", "day_date", "value", "done"],
        "properties": {
          "hive_id": {"type": "string", "format": "uuid"},
          "user_id": {"type": "string", "format": "uuid"},
          "day_date": {"type": "string", "format": "date"},
          "value": {"type": "integer"},
          "done": {"type": "boolean", "description": "value > 0"}
        }
      },
      "HiveDay": {
        "type": "object",
        "required": ["hive_id", "day_date", "complete_count", "required_count", "advanced"],
        "properties": {
          "hive_id": {"type": "string", "format": "uuid"},
          "day_date": {"type": "string", "format": "date"},
          "complete_count": {"type": "integer"},
          "required_count": {"type": "integer"},
          "advanced": {"type": "boolean", "description": "Whether this day advanced the shared streak."}
        }
      },
      "HiveDays": {
        "type": "object",
        "required": ["hive_days", "member_days"],
        "properties": {
          "hive_days": {"type": "array", "items": {"$ref": "#/components/schemas/HiveDay"}},
          "member_days": {"type": "array", "items": {"$ref": "#/components/schemas/HiveMemberDay"}}
        }
      },
      "HiveLogResult": {
        "type": "object",
        "required": ["day", "hive"],
        "properties": {
          "day": {"$ref": "#/components/schemas/HiveMemberDay"},
          "hive": {"$ref": "#/components/schemas/Hive"},
          "hive_day": {"$ref": "#/components/schemas/HiveDay", "description": "The day's tally, when the day is still open."}
        }
      },
      "AdvanceRequest": {
        "type": "object",
        "properties": {"day": {"type": "string", "format": "date", "description": "Default: the owner's today."}}
      },
      "AdvanceResult": {
        "type": "object",
        "required": ["advanced", "complete_count", "required_count", "hive"],
        "properties": {
          "advanced": {"type": "boolean"},
          "complete_count": {"type": "integer"},
          "required_count": {"type": "integer"},
          "hive": {"$ref": "#/components/schemas/Hive"}
        }
      },
      "InviteCreate": {
        "type": "object",
        "properties": {
          "ttl_minutes": {"type": "integer", "minimum": 1, "maximum": 43200, "default": 10080},
          "max_uses": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
        }
      },
      "HiveInvite": {
        "type": "object",
        "required": ["id", "hive_id", "code", "created_by", "expires_at", "max_uses", "use_count", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "hive_id": {"type": "string", "format": "uuid"},
          "code": {"type": "string", "pattern": "^[0-9a-f]{12}$"},
          "created_by": {"type": "string", "format": "uuid"},
          "expires_at": {"type": "string", "format": "date-time"},
          "max_uses": {"type": "integer"},
          "use_count": {"type": "integer"},
          "created_at": {"type": "string", "format": "date-time"}
        }
      },
      "HiveInviteList": {"type": "array", "items": {"$ref": "#/components/schemas/HiveInvite"}},
      "ActivityEvent": {
        "type": "object",
        "required": ["id", "type", "data", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "actor_id": {"type": "string", "format": "uuid"},
          "hive_id": {"type": "string", "format": "uuid"},
          "habit_id": {"type": "string", "format": "uuid"},
          "type": {
            "type": "string",
            "enum": ["habit_completed", "streak_milestone", "hive_joined", "hive_left", "hive_advanced", "hive_broken"]
          },
          "data": {"type": "object", "additionalProperties": true},
          "created_at": {"type": "string", "format": "date-time"}
        }
      },
      "ActivityPage": {
        "type": "object",
        "required": ["events"],
        "properties": {
          "events": {"type": "array", "items": {"$ref": "#/components/schemas/ActivityEvent"}},
          "next_cursor": {"type": ["string", "null"], "description": "Pass as `before` for the next page; absent at the end."}
        }
      },
      "PepperInfo": {
        "type": "object",
        "required": ["pepper", "algorithm"],
        "properties": {"pepper": {"type": "string"}, "algorithm": {"type": "string", "description": "hex(sha256(pepper || e164))"}}
      },
      "ContactsUpload": {
        "type": "object",
        "required": ["contacts"],
        "properties": {
          "contacts": {
            "type": "array",
            "maxItems": 5000,
            "items": {
              "type": "object",
              "required": ["hash"],
              "properties": {
                "hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                "display_name": {"type": "string", "maxLength": 200}
              }
            }
          }
        }
      },
      "ContactMatch": {
        "type": "object",
        "required": ["user_id", "display_name", "contact_hash"],
        "properties": {
          "user_id": {"type": "string", "format": "uuid"},
          "display_name": {"type": "string"},
          "avatar_url": {"type": ["string", "null"]},
          "contact_hash": {"type": "string"},
          "contact_name": {"type": ["string", "null"]}
        }
      },
      "ContactMatches": {
        "type": "object",
        "required": ["matches"],
        "properties": {"matches": {"type": "array", "items": {"$ref": "#/components/schemas/ContactMatch"}}}
      }
    }
  }
}
"""#
}
