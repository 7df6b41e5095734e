/// The nearby service's OpenAPI 3.1 document, served at GET /nearby/v1/openapi.json and checked
/// against the registered routes by the tests.
enum NearbyOpenAPI {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Colony nearby service (SocialSpot)",
    "version": "1.0.0",
    "description": "SocialSpot's profiles and settings, location sharing, people within 500 feet (by default), and blocks. Only access tokens of the socialspot app are accepted. All times are ISO 8601 in UTC with milliseconds; `birthday` is a `YYYY-MM-DD` date; ids are UUIDs. JSON keys are snake_case; optional fields without a value are left out. Precise coordinates never leave the service: positions are rounded to a grid of about 50 feet and distances to 10 ft (under 0.1 mi) or 0.1 mi. Only users who share their location with a fresh position (reported within the TTL, 10 minutes by default) are seen, and only by users who share too; a block hides a pair from each other both ways. Profile photos are uploaded as raw request bodies with their Content-Type (not multipart) and served by the storage routes under /storage/v1 from the public bucket `profile-photos` (URLs with `?v=<version>`). Changes reach other users through the realtime service as events `location_updated`, `location_removed` and `profile_updated`. Errors are `{code, message}`."
  },
  "servers": [{"url": "/"}],
  "security": [{"bearer": []}],
  "tags": [
    {"name": "Meta"},
    {"name": "Profile", "description": "The caller's profile, photo and settings."},
    {"name": "Location", "description": "The caller's shared position."},
    {"name": "Discovery", "description": "People nearby."},
    {"name": "Blocks"}
  ],
  "paths": {
    "/nearby/v1/openapi.json": {
      "get": {
        "operationId": "getOpenAPIDocument",
        "tags": ["Meta"],
        "summary": "This OpenAPI document",
        "description": "Public: no token needed.",
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OpenAPIDocument"}}}}},
        "security": []
      }
    },
    "/nearby/v1/profile": {
      "get": {
        "operationId": "getProfile",
        "tags": ["Profile"],
        "summary": "The caller's own profile",
        "description": "The profile is created on first use if auth's registration event has not arrived yet (its `name` is then empty until set). The owner's view includes `birthday` (with the derived `age`) and the settings `dark_mode`, `satellite_map` and `share_location`; other users only ever see the public card (GET /nearby/v1/nearby, GET /nearby/v1/users/{user_id}), with `age` and never the birthday.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MyProfile"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "patch": {
        "operationId": "updateProfile",
        "tags": ["Profile"],
        "summary": "Edit the caller's profile",
        "description": "Only the fields sent change: an absent field is left as it is; `null` clears `bio`, `school` or `birthday` (a blank `bio` or `school` clears it too). `name` cannot be cleared (null leaves it). Text fields are trimmed: `name` 1–50 characters, `bio` at most 300, `school` at most 100. `birthday` is a `YYYY-MM-DD` date at least 13 years ago (UTC today), not before 1900. `social_links` replaces the whole set of links: platforms left out, null or an empty string are removed. Each link is trimmed and must be either a handle in the platform's format or an https URL on the platform's host (`www.` and subdomains allowed): instagram (instagram.com), snapchat (snapchat.com), tiktok (tiktok.com), linkedin (linkedin.com), youtube (`@handle`; youtube.com or youtu.be), x (x.com or twitter.com), other (any https URL, no handles); URLs at most 200 characters. The new public card goes out as a `profile_updated` event.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProfilePatch"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MyProfile"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "Invalid fields (`validation_failed`): a name not 1–50 characters after trimming, a bio over 300 or a school over 100 characters, a birthday that is not a `YYYY-MM-DD` date at least 13 years ago, a social link that is neither a handle of the platform nor an https URL on its host, or a field of the wrong type.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/nearby/v1/profile/photo": {
      "put": {
        "operationId": "setProfilePhoto",
        "tags": ["Profile"],
        "summary": "Upload the caller's profile photo",
        "description": "Stores the photo as `{user_id}` in the public bucket `profile-photos` (served under /storage/v1/object/public/profile-photos/{user_id}), replacing the old one; the answer's `photo_url` carries `?v=<version>`, so caches refresh. Photos are at most 5 MiB by default (`COLONY_NEARBY_MAX_PHOTO_BYTES`). The new public card goes out as a `profile_updated` event.",
        "requestBody": {
          "required": true,
          "description": "The photo's bytes as the raw request body (not multipart), with its Content-Type `image/jpeg` or `image/png`; the bytes must match the declared type.",
          "content": {
            "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
            "image/png": {"schema": {"type": "string", "format": "binary"}}
          }
        },
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MyProfile"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {"$ref": "#/components/responses/UploadRejected"}
        }
      },
      "delete": {
        "operationId": "removeProfilePhoto",
        "tags": ["Profile"],
        "summary": "Remove the caller's profile photo",
        "description": "Deletes the stored photo (fine when there is none); `photo_url` is then left out. The new public card goes out as a `profile_updated` event.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MyProfile"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/nearby/v1/settings": {
      "patch": {
        "operationId": "updateSettings",
        "tags": ["Profile"],
        "summary": "Change the caller's settings",
        "description": "Only the settings sent change (an empty object changes nothing). Turning `share_location` off deletes the caller's stored position at once, so others stop seeing them immediately, and a `location_removed` event (reason `sharing_off`) goes out so every client drops them. Turning it on shares nothing until the next PUT /nearby/v1/location.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SettingsPatch"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MyProfile"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "A setting that is not a boolean (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/nearby/v1/location": {
      "put": {
        "operationId": "reportLocation",
        "tags": ["Location"],
        "summary": "Report the caller's position",
        "description": "Requires `share_location` on (else 409 `sharing_off`). Stores the caller's precise position, which counts as fresh for the location TTL (10 minutes by default, `COLONY_NEARBY_LOCATION_TTL_SECONDS`; stale positions are deleted by a job, each with a `location_removed` event of reason `expired`), so clients report periodically. Coordinates must be finite numbers: latitude −90…90, longitude −180…180, and the optional `accuracy` 0…100000 meters. The body is also read as JSON5, so `NaN` or `Infinity` literals reach this check and are refused with 422 rather than 400. Precise coordinates are never returned to anyone: the answer and the `location_updated` event carry the position rounded to a grid of about 50 feet.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LocationUpdate"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LocationReport"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "409": {
            "description": "`share_location` is off (`sharing_off`): turn it on with PATCH /nearby/v1/settings first.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "Coordinates missing, not numbers, not finite, or out of range: latitude −90…90, longitude −180…180, accuracy 0…100000 meters (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "removeLocation",
        "tags": ["Location"],
        "summary": "Stop showing the caller's position",
        "description": "Deletes the caller's stored position (fine when there is none), so others stop seeing them at once; when there was one a `location_removed` event (reason `removed`) goes out. `share_location` stays as it is.",
        "responses": {"204": {"description": "Done; no body."}, "401": {"$ref": "#/components/responses/Unauthorized"}}
      }
    },
    "/nearby/v1/nearby": {
      "get": {
        "operationId": "listNearby",
        "tags": ["Discovery"],
        "summary": "People near the caller",
        "description": "Users within `radius_feet` of the caller's position, nearest first, at most `limit`. The list contains only users who share their location with a fresh position (reported within the TTL, 10 minutes by default), never the caller, and never anyone in a block with the caller in either direction. When the caller does not share or has no fresh position, the list is empty and `sharing` is false (who does not share sees nobody). Precise coordinates are never returned: each card's `position` is rounded to a grid of about 50 feet, and distances are rounded to 10 ft (under 0.1 mi, at least 10 ft) or to 0.1 mi beyond. Cards show `age`, never the birthday.",
        "parameters": [
          {
            "name": "radius_feet",
            "in": "query",
            "description": "Search radius in feet; default 500 (`COLONY_NEARBY_RADIUS_FEET`), at most 5280 (`COLONY_NEARBY_MAX_RADIUS_FEET`).",
            "schema": {"type": "integer", "minimum": 1, "maximum": 5280, "default": 500}
          },
          {
            "name": "limit",
            "in": "query",
            "description": "Most users returned.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NearbyList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {
            "description": "`radius_feet` not a whole number or not 1–5280 (the maximum, `COLONY_NEARBY_MAX_RADIUS_FEET`), or `limit` not 1–500 (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/nearby/v1/users/{user_id}": {
      "parameters": [{"$ref": "#/components/parameters/UserId"}],
      "get": {
        "operationId": "getNearbyUser",
        "tags": ["Discovery"],
        "summary": "One nearby person's card",
        "description": "The card of a user under the same rules as the list, within the default radius (500 ft): both the caller and the user share with a fresh position, they are within the radius, and neither has blocked the other. Anyone else — out of range, not sharing, stale, blocked either way, the caller, or unknown — is 404 `user_not_found`, indistinguishably.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NearbyUser"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/UserNotFound"}
        }
      }
    },
    "/nearby/v1/blocks": {
      "get": {
        "operationId": "listBlocks",
        "tags": ["Blocks"],
        "summary": "The caller's blocks",
        "description": "The users the caller has blocked, most recent first. (Users who blocked the caller are not listed.)",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BlockList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "post": {
        "operationId": "blockUser",
        "tags": ["Blocks"],
        "summary": "Block a user",
        "description": "Blocks `user_id` (blocking someone already blocked changes nothing). A block hides the pair from each other both ways, at once: neither appears in the other's nearby list or card. Answers the caller's updated block list.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BlockCreate"}}}},
        "responses": {
          "201": {
            "description": "Created; the caller's block list, most recent first.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BlockList"}}}
          },
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`user_id` missing or not a UUID, or the caller's own id (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/nearby/v1/blocks/{user_id}": {
      "parameters": [
        {
          "name": "user_id",
          "in": "path",
          "required": true,
          "description": "The blocked user's id. A malformed id is 404 `user_not_found`.",
          "schema": {"type": "string", "format": "uuid"}
        }
      ],
      "delete": {
        "operationId": "unblockUser",
        "tags": ["Blocks"],
        "summary": "Unblock a user",
        "description": "Removes the caller's block of `user_id` (fine when there is none). A block the other user made stays.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {
            "description": "`user_id` is not a UUID (`user_not_found`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {
      "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "A Colony access token of the socialspot app."}
    },
    "parameters": {
      "UserId": {
        "name": "user_id",
        "in": "path",
        "required": true,
        "description": "The other user's id. Anyone the caller may not see (or a malformed id) is 404 `user_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      }
    },
    "responses": {
      "MalformedJSON": {
        "description": "The body is not JSON (`malformed_json`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "Unauthorized": {
        "description": "Missing token (`unauthorized`), an invalid token or one of another app (`invalid_token`), an expired token (`token_expired`); or the account was deleted (`account_deleted`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "PayloadTooLarge": {
        "description": "The request body is over the service's limit (`payload_too_large`): by default twice the photo limit (`COLONY_MAX_BODY_BYTES`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "UserNotFound": {
        "description": "Nobody the caller may see by this id (`user_not_found`): not within the radius, not sharing or without a fresh position, blocked either way, the caller, or unknown — indistinguishable.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "UploadRejected": {
        "description": "A missing, unsupported or mismatched Content-Type (`unsupported_media_type`; JPEG or PNG only), a file over the photo limit (`file_too_large`), or an empty body (`empty_file`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      }
    },
    "schemas": {
      "Error": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
          "code": {"type": "string", "description": "Stable machine-readable code, e.g. `user_not_found`."},
          "message": {"type": "string", "description": "For people; may change."}
        }
      },
      "OpenAPIDocument": {
        "type": "object",
        "description": "This document.",
        "required": ["openapi", "info", "paths"],
        "properties": {"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"}}
      },
      "SocialLinks": {
        "type": "object",
        "description": "The social accounts a profile links; each a handle in the platform's format or an https URL on the platform's host. Platforms without a link are left out.",
        "properties": {
          "instagram": {"type": "string", "description": "Handle (`@`optional, 1–30 of letters, digits, `.`, `_`) or https URL on instagram.com."},
          "snapchat": {
            "type": "string",
            "description": "Handle (`@`optional, 3–15 characters starting with a letter: letters, digits, `.`, `_`, `-`) or https URL on snapchat.com."
          },
          "tiktok": {"type": "string", "description": "Handle (`@`optional, 2–24 of letters, digits, `.`, `_`) or https URL on tiktok.com."},
          "linkedin": {"type": "string", "description": "Handle (3–100 of letters, digits, `-`) or https URL on linkedin.com."},
          "youtube": {
            "type": "string",
            "description": "Handle (`@` and 3–30 of letters, digits, `.`, `_`, `-`) or https URL on youtube.com or youtu.be."
          },
          "x": {"type": "string", "description": "Handle (`@`optional, 1–15 of letters, digits, `_`) or https URL on x.com or twitter.com."},
          "other": {"type": "string", "description": "Any https URL."}
        },
        "additionalProperties": false
      },
      "SocialLinksUpdate": {
        "type": "object",
        "description": "The complete new set of links: platforms left out, null or an empty string are removed. Values are trimmed; each must be a handle of the platform or an https URL (at most 200 characters) on its host; `other` takes any https URL only.",
        "properties": {
          "instagram": {"type": ["string", "null"]},
          "snapchat": {"type": ["string", "null"]},
          "tiktok": {"type": ["string", "null"]},
          "linkedin": {"type": ["string", "null"]},
          "youtube": {"type": ["string", "null"]},
          "x": {"type": ["string", "null"]},
          "other": {"type": ["string", "null"]}
        }
      },
      "ApproximatePosition": {
        "type": "object",
        "description": "A position rounded to a grid of about 50 feet (cells stay about 50 ft wide on the ground at every latitude), to 6 decimals; never the precise coordinates.",
        "required": ["latitude", "longitude"],
        "properties": {
          "latitude": {"type": "number", "minimum": -90, "maximum": 90},
          "longitude": {"type": "number", "minimum": -180, "maximum": 180}
        }
      },
      "MyProfile": {
        "type": "object",
        "description": "The caller's own profile, with the birthday and the settings.",
        "required": ["id", "name", "social_links", "dark_mode", "satellite_map", "share_location", "created_at", "updated_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "name": {
            "type": "string",
            "maxLength": 50,
            "description": "The display name (from sign-up; empty until set when the profile was created on first use)."
          },
          "bio": {"type": "string", "maxLength": 300, "description": "Absent when there is none."},
          "school": {"type": "string", "maxLength": 100, "description": "Absent when there is none."},
          "birthday": {"type": "string", "format": "date", "description": "`YYYY-MM-DD`; shown to its owner only; absent when there is none."},
          "age": {"type": "integer", "minimum": 0, "description": "Whole years since the birthday (UTC today); absent when there is no birthday."},
          "social_links": {"$ref": "#/components/schemas/SocialLinks"},
          "photo_url": {
            "type": "string",
            "format": "uri",
            "description": "Public URL of the photo in bucket `profile-photos`, with `?v=<version>`; absent when there is no photo."
          },
          "dark_mode": {"type": "boolean"},
          "satellite_map": {"type": "boolean"},
          "share_location": {
            "type": "boolean",
            "description": "Whether the caller shares their location; off means no stored position and an empty nearby list."
          },
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "ProfilePatch": {
        "type": "object",
        "description": "Absent fields are left as they are; null clears `bio`, `school` and `birthday`.",
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 50, "description": "Trimmed; 1–50 characters. Null leaves the name."},
          "bio": {"type": ["string", "null"], "maxLength": 300, "description": "Trimmed; at most 300 characters; null or blank clears it."},
          "school": {"type": ["string", "null"], "maxLength": 100, "description": "Trimmed; at most 100 characters; null or blank clears it."},
          "birthday": {
            "type": ["string", "null"],
            "format": "date",
            "description": "`YYYY-MM-DD`, at least 13 years ago (and not before 1900); null clears it."
          },
          "social_links": {"$ref": "#/components/schemas/SocialLinksUpdate"}
        }
      },
      "SettingsPatch": {
        "type": "object",
        "description": "Absent settings are left as they are.",
        "properties": {
          "dark_mode": {"type": "boolean"},
          "satellite_map": {"type": "boolean"},
          "share_location": {"type": "boolean", "description": "false deletes the caller's position at once and sends `location_removed`."}
        }
      },
      "LocationUpdate": {
        "type": "object",
        "description": "The caller's precise position (kept by the service, never returned). Read as JSON5 too, so `NaN`/`Infinity` are refused with 422.",
        "required": ["latitude", "longitude"],
        "properties": {
          "latitude": {"type": "number", "minimum": -90, "maximum": 90, "description": "Degrees; finite, −90…90."},
          "longitude": {"type": "number", "minimum": -180, "maximum": 180, "description": "Degrees; finite, −180…180."},
          "accuracy": {"type": "number", "minimum": 0, "maximum": 100000, "description": "Optional: the fix's accuracy in meters, 0…100000."}
        }
      },
      "LocationReport": {
        "type": "object",
        "required": ["updated_at", "position"],
        "properties": {
          "updated_at": {
            "type": "string",
            "format": "date-time",
            "description": "When the position was stored; it is fresh for the location TTL (10 minutes by default)."
          },
          "position": {
            "$ref": "#/components/schemas/ApproximatePosition",
            "description": "The reported position rounded to about 50 feet, as others see it."
          }
        }
      },
      "NearbyUser": {
        "type": "object",
        "description": "A nearby person's public card: the profile without the birthday, the rounded distance, and the rounded position.",
        "required": ["user_id", "name", "social_links", "distance_feet", "distance_miles", "distance_text", "position"],
        "properties": {
          "user_id": {"type": "string", "format": "uuid"},
          "name": {"type": "string"},
          "age": {"type": "integer", "minimum": 0, "description": "Whole years since the birthday (UTC today); absent when there is no birthday."},
          "school": {"type": "string", "description": "Absent when there is none."},
          "bio": {"type": "string", "description": "Absent when there is none."},
          "social_links": {"$ref": "#/components/schemas/SocialLinks"},
          "photo_url": {
            "type": "string",
            "format": "uri",
            "description": "Public URL of the photo in bucket `profile-photos`, with `?v=<version>`; absent when there is no photo."
          },
          "distance_feet": {"type": "integer", "minimum": 10, "description": "Distance in feet, rounded to 10 ft (at least 10)."},
          "distance_miles": {"type": "number", "minimum": 0, "description": "Distance in miles, rounded to 0.1 mi."},
          "distance_text": {
            "type": "string",
            "description": "For display: `\"<feet> ft\"` under 0.1 mi (528 ft), else `\"<miles> mi\"` with one decimal; e.g. `500 ft`, `0.3 mi`.",
            "examples": ["500 ft", "0.3 mi"]
          },
          "position": {"$ref": "#/components/schemas/ApproximatePosition", "description": "Rounded to about 50 feet, for the map."}
        }
      },
      "NearbyList": {
        "type": "object",
        "required": ["sharing", "radius_feet", "users"],
        "properties": {
          "sharing": {"type": "boolean", "description": "Whether the caller shares with a fresh position; when false, `users` is empty."},
          "radius_feet": {"type": "integer", "minimum": 1, "description": "The radius searched."},
          "users": {"type": "array", "items": {"$ref": "#/components/schemas/NearbyUser"}, "description": "Nearest first."}
        }
      },
      "Block": {
        "type": "object",
        "required": ["user_id", "created_at"],
        "properties": {
          "user_id": {"type": "string", "format": "uuid", "description": "The blocked user."},
          "created_at": {"type": "string", "format": "date-time", "description": "When the block was made."}
        }
      },
      "BlockList": {"type": "array", "items": {"$ref": "#/components/schemas/Block"}, "description": "The caller's blocks, most recent first."},
      "BlockCreate": {
        "type": "object",
        "required": ["user_id"],
        "properties": {"user_id": {"type": "string", "format": "uuid", "description": "The user to block; not the caller."}}
      }
    }
  }
}
"""#
}
