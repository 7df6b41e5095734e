/// The projects service's OpenAPI 3.1 document, served at GET /projects/v1/openapi.json and
/// checked against the registered routes by the tests.
enum ProjectsOpenAPI {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Colony projects service (I Believe In You)",
    "version": "1.0.0",
    "description": "I Believe In You's builders, projects, posts, milestones, follows, likes, support messages and karma. Only access tokens of the ibelieveinyou app are accepted. Every user action is one operation in one transaction; counts (`follower_count`, `like_count`), karma and support actions are written by the service only. All times are ISO 8601 in UTC with milliseconds; ids are UUIDs; JSON keys are snake_case; optional fields without a value are left out. A published project is visible to every user; an unpublished one exists for its owner only (404 for everyone else, for the project and everything in it); changes to a project are its owner's (403 `not_project_owner` for others). Pictures are uploaded as raw request bodies with their Content-Type (not multipart) and served from the public buckets `builder-avatars`, `project-covers` and `post-images` under /storage/v1/object/public/. Errors are `{code, message}`."
  },
  "servers": [{"url": "/"}],
  "security": [{"bearer": []}],
  "tags": [
    {"name": "Meta"},
    {"name": "Me", "description": "The caller's builder profile."},
    {"name": "Karma", "description": "The caller's karma, stats and actions."},
    {"name": "Builders"},
    {"name": "Projects"},
    {"name": "Follows"},
    {"name": "Posts", "description": "Updates, the feed, likes."},
    {"name": "Milestones"},
    {"name": "Support", "description": "Support messages."}
  ],
  "paths": {
    "/projects/v1/openapi.json": {
      "get": {
        "operationId": "getOpenAPIDocument",
        "tags": ["Meta"],
        "summary": "This OpenAPI document",
        "description": "Public: no token needed.",
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/OpenAPIDocument"}}}}},
        "security": []
      }
    },
    "/projects/v1/me": {
      "get": {
        "operationId": "getMe",
        "tags": ["Me"],
        "summary": "The caller's builder profile",
        "description": "`getBuilderProfile`. Every user has a builder (creator or supporter) and a karma row, made from auth's `user_registered` (name from the sign-up metadata) or, if that event is late, on the first request (name: the token's email local part, replaced by the sign-up name when the event arrives).",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Builder"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      },
      "patch": {
        "operationId": "updateMe",
        "tags": ["Me"],
        "summary": "Edit the caller's profile",
        "description": "`updateBuilderProfileFull`. Absent fields stay; `null` (or an empty string) clears `bio`, `website_url` and `twitter_handle`. Onboarding sets `is_creator` (creating a project sets it too). Publishes `builder_updated`.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BuilderUpdate"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Builder"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`name` not 1–60 characters after trimming, `bio` over 500 characters, `website_url` not an http(s) URL with a host (a bare `example.com` becomes `https://example.com`), `twitter_handle` not 1–15 letters, digits or underscores (an optional `@`, or a twitter.com / x.com profile URL), or a field of the wrong type (`validation_failed`). Nothing is changed.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/me/avatar": {
      "put": {
        "operationId": "setAvatar",
        "tags": ["Me"],
        "summary": "Upload the caller's avatar",
        "description": "Stores the picture as `{builder_id}` in the public bucket `builder-avatars`, replacing the old one; `avatar_url` carries `?v=<version>`, so caches refresh. At most 5 MiB by default (`COLONY_PROJECTS_MAX_IMAGE_BYTES`). Publishes `builder_updated`.",
        "requestBody": {
          "required": true,
          "description": "The picture's bytes as the raw request body (not multipart), with its Content-Type; the bytes must match the declared type.",
          "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}, "image/png": {"schema": {"type": "string", "format": "binary"}}}
        },
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Builder"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {"$ref": "#/components/responses/UploadRejected"}
        }
      },
      "delete": {
        "operationId": "removeAvatar",
        "tags": ["Me"],
        "summary": "Remove the caller's avatar",
        "description": "Deletes the stored picture (fine when there is none); `avatar_url` is then left out.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Builder"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/projects/v1/me/karma": {
      "get": {
        "operationId": "getKarma",
        "tags": ["Karma"],
        "summary": "The caller's karma",
        "description": "`getUserKarma`: points, level (1–5) with the seed's label and emoji, and the way to the next level. Levels: 1 New Supporter 🌱 (0–50), 2 Supporter 💚 (51–200), 3 Super Supporter 💜 (201–500), 4 Champion ⭐ (501–1000), 5 Legend 👑 (1001+). Points: a follow 5, a like 1, a support message 10 (see those operations for when they count).",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Karma"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/projects/v1/me/stats": {
      "get": {
        "operationId": "getSupportStats",
        "tags": ["Karma"],
        "summary": "The caller's support stats",
        "description": "`getUserSupportStats`: projects followed now, support messages sent, posts liked now.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SupportStats"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/projects/v1/me/support-actions": {
      "get": {
        "operationId": "listSupportActions",
        "tags": ["Karma"],
        "summary": "The caller's recent support actions",
        "description": "`getUserSupportActions`: what earned the caller karma, newest first, with each project's title and slug. Only the caller sees their own actions.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many actions (1–100); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SupportActionList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {
            "description": "`limit` out of range (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/me/following": {
      "get": {
        "operationId": "listFollowedProjects",
        "tags": ["Follows"],
        "summary": "Projects the caller follows",
        "description": "`getFollowedProjects`: latest follow first, keyset-paged by `next_cursor`. Projects the caller can no longer see (unpublished by their owner) are left out.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many projects (1–200); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}
          },
          {"$ref": "#/components/parameters/Cursor"}
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProjectPage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {
            "description": "`limit` out of range or a `cursor` not from an earlier page (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/me/projects": {
      "get": {
        "operationId": "listMyProjects",
        "tags": ["Projects"],
        "summary": "The caller's own projects",
        "description": "Newest first, unpublished ones included.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many projects (1–100); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProjectList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {
            "description": "`limit` out of range (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/builders/{builder_id}": {
      "parameters": [{"$ref": "#/components/parameters/BuilderId"}],
      "get": {
        "operationId": "getBuilder",
        "tags": ["Builders"],
        "summary": "A builder's public profile",
        "description": "`getBuilder`: any builder, for the creator page.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Builder"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/BuilderNotFound"}
        }
      }
    },
    "/projects/v1/builders/{builder_id}/projects": {
      "parameters": [{"$ref": "#/components/parameters/BuilderId"}],
      "get": {
        "operationId": "listBuilderProjects",
        "tags": ["Builders"],
        "summary": "A builder's projects",
        "description": "`getProjectsByBuilder`: newest first; published ones only, unless the caller is that builder.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many projects (1–100); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProjectList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/BuilderNotFound"},
          "422": {
            "description": "`limit` out of range (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/users/{user_id}/builder": {
      "parameters": [{"$ref": "#/components/parameters/UserId"}],
      "get": {
        "operationId": "getBuilderByUser",
        "tags": ["Builders"],
        "summary": "The builder of an account",
        "description": "`getBuilderByUserId`: by auth user id.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Builder"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/BuilderNotFound"}
        }
      }
    },
    "/projects/v1/projects": {
      "get": {
        "operationId": "listProjects",
        "tags": ["Projects"],
        "summary": "Discover published projects",
        "description": "`getProjects`, `getTrendingProjects`, `getNewProjects` and the Discover search in one: published projects only, `sort=new` (default: `created_at` desc) or `sort=trending` (`follower_count` desc), optionally only those whose title or tagline contains `q` (case-insensitive; `%`, `_` and `\\` are taken literally), keyset-paged by `next_cursor` (keep the same `sort` and `q`).",
        "parameters": [
          {"name": "sort", "in": "query", "required": false, "schema": {"type": "string", "enum": ["new", "trending"], "default": "new"}},
          {
            "name": "q",
            "in": "query",
            "required": false,
            "description": "Search in titles and taglines; 1–100 characters after trimming.",
            "schema": {"type": "string", "minLength": 1, "maxLength": 100}
          },
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many projects (1–100); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
          },
          {"$ref": "#/components/parameters/Cursor"}
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProjectPage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {
            "description": "`sort` not `new` or `trending`, `q` not 1–100 characters, `limit` out of range, or a `cursor` not from an earlier page (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "createProject",
        "tags": ["Projects"],
        "summary": "Create a project",
        "description": "`createProject`. The caller owns it (and becomes a creator). The slug is made from the title (lowercase letters and digits, words joined by `-`, accents dropped; `project` when nothing is left) with a random 6-character suffix when taken; or the caller asks for `public_slug` (409 when taken). Publishes `project_created`.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProjectCreate"}}}},
        "responses": {
          "201": {"description": "Created.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Project"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "409": {
            "description": "The `public_slug` asked for is taken (`slug_taken`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`title` not 1–100 characters after trimming, `tagline` over 160 or `description` over 10,000 characters, a `mood` other than green/yellow/red, a malformed `public_slug`, or a field of the wrong type (`validation_failed`). Nothing is written.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/projects/by-slug/{slug}": {
      "parameters": [{"$ref": "#/components/parameters/Slug"}],
      "get": {
        "operationId": "getProjectBySlug",
        "tags": ["Projects"],
        "summary": "A project by its public slug",
        "description": "`getProject(slug)`, for shared links. An unpublished project exists for its owner only.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Project"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"}
        }
      }
    },
    "/projects/v1/slugs/{slug}": {
      "parameters": [{"$ref": "#/components/parameters/Slug"}],
      "get": {
        "operationId": "checkSlug",
        "tags": ["Projects"],
        "summary": "Whether a slug is taken",
        "description": "`checkSlugExists`: by any project, published or not.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SlugCheck"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {
            "description": "Not a valid slug: 1–80 lowercase letters, digits and single hyphens, not at either end (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/projects/{project_id}": {
      "parameters": [{"$ref": "#/components/parameters/ProjectId"}],
      "get": {
        "operationId": "getProject",
        "tags": ["Projects"],
        "summary": "One project",
        "description": "With its builder, whether the caller follows it and whether it is theirs.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Project"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"}
        }
      },
      "patch": {
        "operationId": "updateProject",
        "tags": ["Projects"],
        "summary": "Edit a project",
        "description": "`updateProject`, owner only: title, tagline, description, `public_slug` (409 when taken), `mood` (green \"Going great!\", yellow \"Working on it\", red \"Need support\"; `null` clears it), `is_published` (unpublished projects disappear for everyone else, their posts from feeds too). Absent fields stay; `null` or \"\" clears tagline and description. Publishes `project_updated`.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ProjectUpdate"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Project"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "409": {
            "description": "The `public_slug` is taken (`slug_taken`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "Invalid fields, as for creating (`validation_failed`). Nothing is changed.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteProject",
        "tags": ["Projects"],
        "summary": "Delete a project",
        "description": "`deleteProject`, owner only: with its posts (and their pictures), milestones, follows, likes, support messages and cover. Publishes `project_deleted` with the ids of its followers. Karma already earned stays.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/ProjectNotFound"}
        }
      }
    },
    "/projects/v1/projects/{project_id}/cover": {
      "parameters": [{"$ref": "#/components/parameters/ProjectId"}],
      "put": {
        "operationId": "setCover",
        "tags": ["Projects"],
        "summary": "Upload the project's cover",
        "description": "Owner only. Stores the picture as `{project_id}` in the public bucket `project-covers`, replacing the old one; `cover_image_url` carries `?v=<version>`. Publishes `project_updated`.",
        "requestBody": {
          "required": true,
          "description": "The picture's bytes as the raw request body (not multipart), with its Content-Type; the bytes must match the declared type.",
          "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}, "image/png": {"schema": {"type": "string", "format": "binary"}}}
        },
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Project"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {"$ref": "#/components/responses/UploadRejected"}
        }
      },
      "delete": {
        "operationId": "removeCover",
        "tags": ["Projects"],
        "summary": "Remove the project's cover",
        "description": "Owner only; fine when there is none.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Project"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/ProjectNotFound"}
        }
      }
    },
    "/projects/v1/projects/{project_id}/follow": {
      "parameters": [{"$ref": "#/components/parameters/ProjectId"}],
      "post": {
        "operationId": "followProject",
        "tags": ["Follows"],
        "summary": "Follow a project",
        "description": "`followProject`, idempotent, one transaction: the follow, `follower_count + 1` (exact under concurrency), and — the first time ever this user follows this project, and never for their own — a `follow` support action and 5 karma. Unfollowing and following again earns nothing more. A repeated follow changes nothing. Publishes `project_followed` (and `karma_level_up` when the level rises).",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/FollowState"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"}
        }
      },
      "delete": {
        "operationId": "unfollowProject",
        "tags": ["Follows"],
        "summary": "Unfollow a project",
        "description": "`unfollowProject`, idempotent: `follower_count - 1`; karma stays. Publishes `project_unfollowed`.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/FollowState"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"}
        }
      }
    },
    "/projects/v1/projects/{project_id}/supporters": {
      "parameters": [{"$ref": "#/components/parameters/ProjectId"}],
      "get": {
        "operationId": "listSupporters",
        "tags": ["Follows"],
        "summary": "The project's supporters",
        "description": "`getProjectSupporters`: builders following the project, latest first.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many builders (1–200); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/BuilderCardList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "422": {
            "description": "`limit` out of range (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/projects/{project_id}/posts": {
      "parameters": [{"$ref": "#/components/parameters/ProjectId"}],
      "get": {
        "operationId": "listProjectPosts",
        "tags": ["Posts"],
        "summary": "A project's posts",
        "description": "`getProjectPosts`: newest first, keyset-paged, each with `liked_by_me`.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many posts (1–50); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20}
          },
          {"$ref": "#/components/parameters/Cursor"}
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PostPage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "422": {
            "description": "`limit` out of range or a bad `cursor` (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "createPost",
        "tags": ["Posts"],
        "summary": "Post an update",
        "description": "`createPost`, owner only. `images` are pictures uploaded to this project beforehand (POST …/images), by key or URL; each goes into one post. Publishes `project_post_created`.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PostCreate"}}}},
        "responses": {
          "201": {"description": "Created.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`content` blank or over 5000 characters, more than 10 images (`validation_failed`), or an image that is not a waiting upload of this project (`unknown_image`). Nothing is written.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/projects/{project_id}/images": {
      "parameters": [{"$ref": "#/components/parameters/ProjectId"}],
      "post": {
        "operationId": "uploadPostImage",
        "tags": ["Posts"],
        "summary": "Upload a picture for a post",
        "description": "Owner only. Stores the picture as `{project_id}/{image_id}` in the public bucket `post-images` and answers its key and URL, to put in a post's `images`. A picture no post takes within a day (`COLONY_PROJECTS_UPLOAD_TTL_SECONDS`) is deleted.",
        "requestBody": {
          "required": true,
          "description": "The picture's bytes as the raw request body (not multipart), with its Content-Type; the bytes must match the declared type.",
          "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}, "image/png": {"schema": {"type": "string", "format": "binary"}}}
        },
        "responses": {
          "201": {"description": "Stored.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UploadedImage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {"$ref": "#/components/responses/UploadRejected"}
        }
      }
    },
    "/projects/v1/feed": {
      "get": {
        "operationId": "getFeed",
        "tags": ["Posts"],
        "summary": "The caller's feed",
        "description": "`getFeedPosts`: posts of the projects the caller follows (and can see), newest first, each with its project and builder and `liked_by_me`, in one query; keyset-paged by `next_cursor`.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many posts (1–50); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20}
          },
          {"$ref": "#/components/parameters/Cursor"}
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PostPage"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "422": {
            "description": "`limit` out of range or a bad `cursor` (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/posts/{post_id}": {
      "parameters": [{"$ref": "#/components/parameters/PostId"}],
      "get": {
        "operationId": "getPost",
        "tags": ["Posts"],
        "summary": "One post",
        "description": "`getPost`, with its project and builder.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      },
      "patch": {
        "operationId": "updatePost",
        "tags": ["Posts"],
        "summary": "Edit a post",
        "description": "`updatePost`, owner only: new `content` and/or the whole new list of `images` (pictures already in the post, or new uploads of the project); pictures left out are deleted.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PostUpdate"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Post"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/PostNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "As for creating (`validation_failed`, `unknown_image`). Nothing is changed.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deletePost",
        "tags": ["Posts"],
        "summary": "Delete a post",
        "description": "`deletePost`, owner only, with its pictures and likes.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      }
    },
    "/projects/v1/posts/{post_id}/like": {
      "parameters": [{"$ref": "#/components/parameters/PostId"}],
      "post": {
        "operationId": "likePost",
        "tags": ["Posts"],
        "summary": "Like a post",
        "description": "`likePost`, idempotent, one transaction: the like, `like_count + 1` (exact under concurrency), and — the first time ever this user likes this post, and never on their own project — a `like` support action and 1 karma. Publishes `post_liked` (and `karma_level_up` when the level rises).",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LikeState"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      },
      "delete": {
        "operationId": "unlikePost",
        "tags": ["Posts"],
        "summary": "Unlike a post",
        "description": "`unlikePost`, idempotent: `like_count - 1`; karma stays.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LikeState"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/PostNotFound"}
        }
      }
    },
    "/projects/v1/projects/{project_id}/milestones": {
      "parameters": [{"$ref": "#/components/parameters/ProjectId"}],
      "get": {
        "operationId": "listMilestones",
        "tags": ["Milestones"],
        "summary": "A project's milestones",
        "description": "`getProjectMilestones`: by target date, those without one last, then as created.",
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MilestoneList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"}
        }
      },
      "post": {
        "operationId": "createMilestone",
        "tags": ["Milestones"],
        "summary": "Add a milestone",
        "description": "`createMilestone`, owner only.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MilestoneCreate"}}}},
        "responses": {
          "201": {"description": "Created.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Milestone"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`title` not 1–200 characters after trimming, `description` over 2000 characters, or `target_date` not a real `YYYY-MM-DD` day (`validation_failed`). Nothing is written.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/milestones/{milestone_id}": {
      "parameters": [{"$ref": "#/components/parameters/MilestoneId"}],
      "patch": {
        "operationId": "updateMilestone",
        "tags": ["Milestones"],
        "summary": "Edit a milestone",
        "description": "`updateMilestone`, owner only. Absent fields stay; `null` clears description and target date; `is_completed` sets `completed_at` (kept when it was complete already) or clears it. Completing publishes `milestone_completed`.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MilestoneUpdate"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Milestone"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/MilestoneNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "Invalid fields, as for creating (`validation_failed`). Nothing is changed.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "delete": {
        "operationId": "deleteMilestone",
        "tags": ["Milestones"],
        "summary": "Delete a milestone",
        "description": "`deleteMilestone`, owner only.",
        "responses": {
          "204": {"description": "Done; no body."},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/MilestoneNotFound"}
        }
      }
    },
    "/projects/v1/milestones/{milestone_id}/toggle": {
      "parameters": [{"$ref": "#/components/parameters/MilestoneId"}],
      "post": {
        "operationId": "toggleMilestone",
        "tags": ["Milestones"],
        "summary": "Complete or reopen a milestone",
        "description": "`toggleMilestoneComplete`, owner only: sets `is_completed` as given, or flips it without a body; completing sets `completed_at` (publishes `milestone_completed`), reopening clears it.",
        "requestBody": {"required": false, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/MilestoneToggle"}}}},
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Milestone"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "403": {
            "description": "The project is visible to the caller but not theirs (`not_project_owner`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "404": {"$ref": "#/components/responses/MilestoneNotFound"},
          "422": {
            "description": "`is_completed` not a boolean (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    },
    "/projects/v1/projects/{project_id}/support-messages": {
      "parameters": [{"$ref": "#/components/parameters/ProjectId"}],
      "get": {
        "operationId": "listSupportMessages",
        "tags": ["Support"],
        "summary": "A project's latest support messages",
        "description": "`getProjectSupportMessages`: newest first (5 by default). An anonymous message has neither `sender_id` nor `sender`, for everyone — its project's owner too.",
        "parameters": [
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "How many messages (1–50); outside that range is 422.",
            "schema": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5}
          }
        ],
        "responses": {
          "200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SupportMessageList"}}}},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "422": {
            "description": "`limit` out of range (`validation_failed`).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      },
      "post": {
        "operationId": "sendSupportMessage",
        "tags": ["Support"],
        "summary": "Send a support message",
        "description": "`sendSupportMessage`, one transaction: the message, a `message` support action and 10 karma. Not to your own project. At most 10 per sender per hour by default (`COLONY_PROJECTS_SUPPORT_LIMIT` per `COLONY_PROJECTS_SUPPORT_WINDOW_SECONDS`). With `is_anonymous` the sender is never shown: not in answers, not to the owner, not in the `support_sent` event (no sender, no actor). Publishes `support_sent` (and `karma_level_up` when the level rises).",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SupportMessageCreate"}}}},
        "responses": {
          "201": {"description": "Sent.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SupportSent"}}}},
          "400": {"$ref": "#/components/responses/MalformedJSON"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"$ref": "#/components/responses/ProjectNotFound"},
          "413": {"$ref": "#/components/responses/PayloadTooLarge"},
          "422": {
            "description": "`message` not 1–1000 characters after trimming, `is_anonymous` not a boolean (`validation_failed`), or the project is the caller's own (`own_project`). Nothing is written.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          },
          "429": {
            "description": "Over the sender's limit (`rate_limited`); `Retry-After` says in how many seconds the next message is allowed. Nothing is written.",
            "headers": {"Retry-After": {"description": "Seconds until the next message is allowed.", "schema": {"type": "integer", "minimum": 1}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
          }
        }
      }
    }
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "A Colony access token of the ibelieveinyou app."}},
    "parameters": {
      "ProjectId": {
        "name": "project_id",
        "in": "path",
        "required": true,
        "description": "The project's id. Someone else's unpublished project (or a malformed id) is 404 `project_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "PostId": {
        "name": "post_id",
        "in": "path",
        "required": true,
        "description": "The post's id; a post of a project the caller cannot see (or a malformed id) is 404 `post_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "MilestoneId": {
        "name": "milestone_id",
        "in": "path",
        "required": true,
        "description": "The milestone's id; one of a project the caller cannot see is 404 `milestone_not_found`.",
        "schema": {"type": "string", "format": "uuid"}
      },
      "BuilderId": {
        "name": "builder_id",
        "in": "path",
        "required": true,
        "description": "The builder's id (`builders.id`).",
        "schema": {"type": "string", "format": "uuid"}
      },
      "UserId": {"name": "user_id", "in": "path", "required": true, "description": "An auth user id.", "schema": {"type": "string", "format": "uuid"}},
      "Slug": {"name": "slug", "in": "path", "required": true, "description": "A project's `public_slug`.", "schema": {"type": "string", "maxLength": 80}},
      "Cursor": {
        "name": "cursor",
        "in": "query",
        "required": false,
        "description": "`next_cursor` of the previous page; absent for the first.",
        "schema": {"type": "string"}
      }
    },
    "responses": {
      "MalformedJSON": {
        "description": "The body is not JSON (`malformed_json`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "Unauthorized": {
        "description": "Missing, invalid or expired token, or a token of another app (`unauthorized`); or the account was deleted (`account_deleted`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "PayloadTooLarge": {
        "description": "The request body is over the service's limit (`payload_too_large`): twice the picture limit.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "ProjectNotFound": {
        "description": "No such project, or someone else's unpublished one (`project_not_found`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "PostNotFound": {
        "description": "No such post, or one of a project the caller cannot see (`post_not_found`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "MilestoneNotFound": {
        "description": "No such milestone, or one of a project the caller cannot see (`milestone_not_found`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "BuilderNotFound": {
        "description": "No such builder (`builder_not_found`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      },
      "UploadRejected": {
        "description": "A missing, unsupported or mismatched Content-Type (`unsupported_media_type`; JPEG or PNG only), a file over the limit (`file_too_large`), or an empty body (`empty_file`).",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
      }
    },
    "schemas": {
      "Error": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
          "code": {"type": "string", "description": "Stable machine-readable code, e.g. `project_not_found`."},
          "message": {"type": "string", "description": "For people; may change."}
        },
        "additionalProperties": true
      },
      "OpenAPIDocument": {
        "type": "object",
        "description": "This document.",
        "required": ["openapi", "info", "paths"],
        "properties": {"openapi": {"type": "string"}, "info": {"type": "object"}, "paths": {"type": "object"}}
      },
      "Mood": {"type": "string", "enum": ["green", "yellow", "red"], "description": "green \"Going great!\", yellow \"Working on it\", red \"Need support\"."},
      "Builder": {
        "type": "object",
        "required": ["id", "user_id", "name", "is_creator", "created_at", "updated_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "user_id": {"type": "string", "format": "uuid", "description": "The auth account's id."},
          "name": {"type": "string"},
          "bio": {"type": "string", "description": "Absent when there is none."},
          "avatar_url": {"type": "string", "description": "Public URL with `?v=<version>`; absent when there is no avatar."},
          "website_url": {"type": "string"},
          "twitter_handle": {"type": "string", "description": "Without `@`."},
          "is_creator": {"type": "boolean"},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        },
        "description": "`builders`: every user's profile."
      },
      "BuilderCard": {
        "type": "object",
        "required": ["id", "user_id", "name"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "user_id": {"type": "string", "format": "uuid"},
          "name": {"type": "string"},
          "avatar_url": {"type": "string", "description": "Absent when there is no avatar."}
        },
        "description": "The public part of a builder."
      },
      "BuilderCardList": {"type": "array", "items": {"$ref": "#/components/schemas/BuilderCard"}},
      "BuilderUpdate": {
        "type": "object",
        "properties": {
          "name": {"type": "string", "minLength": 1, "maxLength": 60, "description": "Trimmed; 1–60 characters."},
          "bio": {"type": ["string", "null"], "description": "At most 500 characters; null or \"\" clears it.", "maxLength": 500},
          "website_url": {
            "type": ["string", "null"],
            "description": "An http(s) URL (`example.com` is taken as `https://example.com`); null or \"\" clears it."
          },
          "twitter_handle": {
            "type": ["string", "null"],
            "description": "`name`, `@name`, or a twitter.com / x.com profile URL; stored without `@`; null or \"\" clears it."
          },
          "is_creator": {"type": "boolean", "description": "Onboarding's choice: \"Share my project\" (true) or \"Support creators\" (false)."}
        }
      },
      "Karma": {
        "type": "object",
        "required": ["id", "user_id", "total_points", "level", "label", "emoji", "progress", "created_at", "updated_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "user_id": {"type": "string", "format": "uuid"},
          "total_points": {"type": "integer", "minimum": 0},
          "level": {"type": "integer", "minimum": 1, "maximum": 5},
          "label": {"type": "string", "enum": ["New Supporter", "Supporter", "Super Supporter", "Champion", "Legend"]},
          "emoji": {"type": "string", "enum": ["🌱", "💚", "💜", "⭐", "👑"]},
          "next_level_at": {"type": "integer", "description": "The points where the next level starts (51, 201, 501, 1001); absent at Legend."},
          "points_to_next_level": {"type": "integer", "description": "Absent at Legend."},
          "progress": {"type": "number", "minimum": 0, "maximum": 1, "description": "Share of the current level's span covered (1 at Legend)."},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "SupportStats": {
        "type": "object",
        "required": ["projects_supported", "messages_sent", "posts_liked"],
        "properties": {
          "projects_supported": {"type": "integer", "description": "Projects followed now."},
          "messages_sent": {"type": "integer"},
          "posts_liked": {"type": "integer", "description": "Posts liked now."}
        }
      },
      "SupportAction": {
        "type": "object",
        "required": ["id", "user_id", "project_id", "action_type", "points_earned", "created_at", "project"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "user_id": {"type": "string", "format": "uuid"},
          "project_id": {"type": "string", "format": "uuid"},
          "action_type": {"type": "string", "enum": ["follow", "message", "like"]},
          "points_earned": {"type": "integer"},
          "metadata": {"type": "object", "description": "`post_id` for a like, `message_id` for a message; absent for a follow."},
          "created_at": {"type": "string", "format": "date-time"},
          "project": {
            "type": "object",
            "required": ["id", "title", "public_slug"],
            "properties": {"id": {"type": "string", "format": "uuid"}, "title": {"type": "string"}, "public_slug": {"type": "string"}}
          }
        }
      },
      "SupportActionList": {"type": "array", "items": {"$ref": "#/components/schemas/SupportAction"}},
      "Project": {
        "type": "object",
        "required": [
          "id",
          "builder_id",
          "title",
          "public_slug",
          "follower_count",
          "is_published",
          "created_at",
          "updated_at",
          "builder",
          "is_following",
          "is_owner"
        ],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "builder_id": {"type": "string", "format": "uuid"},
          "title": {"type": "string"},
          "tagline": {"type": "string"},
          "description": {"type": "string"},
          "cover_image_url": {"type": "string", "description": "Public URL with `?v=<version>`; absent when there is no cover."},
          "public_slug": {"type": "string"},
          "mood": {"$ref": "#/components/schemas/Mood"},
          "follower_count": {"type": "integer", "minimum": 0},
          "is_published": {"type": "boolean"},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"},
          "builder": {"$ref": "#/components/schemas/BuilderCard"},
          "is_following": {"type": "boolean", "description": "Whether the caller follows it."},
          "is_owner": {"type": "boolean"}
        },
        "description": "`projects` with its builder (the seed's join); optional fields are absent when empty."
      },
      "ProjectList": {"type": "array", "items": {"$ref": "#/components/schemas/Project"}},
      "ProjectPage": {
        "type": "object",
        "required": ["projects"],
        "properties": {
          "projects": {"type": "array", "items": {"$ref": "#/components/schemas/Project"}},
          "next_cursor": {"type": "string", "description": "Pass as `cursor` for the next page; absent on the last."}
        }
      },
      "ProjectCreate": {
        "type": "object",
        "required": ["title"],
        "properties": {
          "title": {"type": "string", "minLength": 1, "maxLength": 100},
          "tagline": {"type": "string", "maxLength": 160},
          "description": {"type": "string", "maxLength": 10000},
          "public_slug": {"type": "string", "maxLength": 80, "description": "Optional; made from the title when absent."},
          "mood": {"$ref": "#/components/schemas/Mood"},
          "is_published": {"type": "boolean", "default": true}
        }
      },
      "ProjectUpdate": {
        "type": "object",
        "properties": {
          "title": {"type": "string", "minLength": 1, "maxLength": 100},
          "tagline": {"type": ["string", "null"], "description": "null or \"\" clears it.", "maxLength": 160},
          "description": {"type": ["string", "null"], "description": "null or \"\" clears it.", "maxLength": 10000},
          "public_slug": {"type": "string", "maxLength": 80},
          "mood": {"oneOf": [{"$ref": "#/components/schemas/Mood"}, {"type": "null"}], "description": "null clears it."},
          "is_published": {"type": "boolean"}
        }
      },
      "SlugCheck": {
        "type": "object",
        "required": ["slug", "exists"],
        "properties": {"slug": {"type": "string", "description": "The slug as checked (lowercased)."}, "exists": {"type": "boolean"}}
      },
      "FollowState": {
        "type": "object",
        "required": ["project_id", "following", "follower_count", "karma_earned"],
        "properties": {
          "project_id": {"type": "string", "format": "uuid"},
          "following": {"type": "boolean"},
          "follower_count": {"type": "integer"},
          "karma_earned": {"type": "integer", "description": "5 for the first follow ever of someone else's project, else 0."},
          "karma": {"$ref": "#/components/schemas/Karma", "description": "The caller's karma after the award; absent when nothing was earned."}
        }
      },
      "PostProject": {
        "type": "object",
        "required": ["id", "title", "public_slug", "builder"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "title": {"type": "string"},
          "public_slug": {"type": "string"},
          "cover_image_url": {"type": "string"},
          "builder": {"$ref": "#/components/schemas/BuilderCard"}
        }
      },
      "Post": {
        "type": "object",
        "required": ["id", "project_id", "content", "images", "like_count", "created_at", "updated_at", "project", "liked_by_me"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "project_id": {"type": "string", "format": "uuid"},
          "content": {"type": "string"},
          "images": {"type": "array", "items": {"type": "string"}, "description": "Public URLs of the pictures."},
          "like_count": {"type": "integer", "minimum": 0},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"},
          "project": {"$ref": "#/components/schemas/PostProject"},
          "liked_by_me": {"type": "boolean"}
        },
        "description": "`posts` with its project and builder (the seed's `project:projects(…, builder:builders(…))` join)."
      },
      "PostPage": {
        "type": "object",
        "required": ["posts"],
        "properties": {
          "posts": {"type": "array", "items": {"$ref": "#/components/schemas/Post"}},
          "next_cursor": {"type": "string", "description": "Pass as `cursor` for the next (older) page; absent on the last."}
        }
      },
      "PostCreate": {
        "type": "object",
        "required": ["content"],
        "properties": {
          "content": {"type": "string", "minLength": 1, "maxLength": 5000, "description": "Not blank."},
          "images": {
            "type": "array",
            "maxItems": 10,
            "items": {"type": "string"},
            "default": [],
            "description": "Keys (or URLs) from POST …/images of this project."
          }
        }
      },
      "PostUpdate": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "minLength": 1, "maxLength": 5000},
          "images": {"type": "array", "maxItems": 10, "items": {"type": "string"}, "description": "The whole new list."}
        }
      },
      "UploadedImage": {
        "type": "object",
        "required": ["key", "url"],
        "properties": {"key": {"type": "string", "description": "`{project_id}/{image_id}`."}, "url": {"type": "string"}}
      },
      "LikeState": {
        "type": "object",
        "required": ["post_id", "liked", "like_count", "karma_earned"],
        "properties": {
          "post_id": {"type": "string", "format": "uuid"},
          "liked": {"type": "boolean"},
          "like_count": {"type": "integer"},
          "karma_earned": {"type": "integer", "description": "1 for the first like ever of this post (not on your own project), else 0."},
          "karma": {"$ref": "#/components/schemas/Karma", "description": "Absent when nothing was earned."}
        }
      },
      "Milestone": {
        "type": "object",
        "required": ["id", "project_id", "title", "is_completed", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "project_id": {"type": "string", "format": "uuid"},
          "title": {"type": "string"},
          "description": {"type": "string"},
          "is_completed": {"type": "boolean"},
          "target_date": {"type": "string", "format": "date"},
          "completed_at": {"type": "string", "format": "date-time", "description": "Present while completed."},
          "created_at": {"type": "string", "format": "date-time"}
        }
      },
      "MilestoneList": {"type": "array", "items": {"$ref": "#/components/schemas/Milestone"}},
      "MilestoneCreate": {
        "type": "object",
        "required": ["title"],
        "properties": {
          "title": {"type": "string", "minLength": 1, "maxLength": 200},
          "description": {"type": ["string", "null"], "maxLength": 2000},
          "target_date": {"type": ["string", "null"], "format": "date"}
        }
      },
      "MilestoneUpdate": {
        "type": "object",
        "properties": {
          "title": {"type": "string", "minLength": 1, "maxLength": 200},
          "description": {"type": ["string", "null"], "description": "null clears it.", "maxLength": 2000},
          "target_date": {"type": ["string", "null"], "format": "date", "description": "null clears it."},
          "is_completed": {"type": "boolean"}
        }
      },
      "MilestoneToggle": {"type": "object", "properties": {"is_completed": {"type": "boolean", "description": "Absent: flip."}}},
      "SupportMessage": {
        "type": "object",
        "required": ["id", "project_id", "message", "is_anonymous", "created_at"],
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "project_id": {"type": "string", "format": "uuid"},
          "sender_id": {"type": "string", "format": "uuid", "description": "The sender's builder id; absent when anonymous."},
          "message": {"type": "string"},
          "is_anonymous": {"type": "boolean"},
          "created_at": {"type": "string", "format": "date-time"},
          "sender": {"$ref": "#/components/schemas/BuilderCard", "description": "Absent when anonymous, or when the sender's account is gone."}
        }
      },
      "SupportMessageList": {"type": "array", "items": {"$ref": "#/components/schemas/SupportMessage"}},
      "SupportMessageCreate": {
        "type": "object",
        "required": ["message"],
        "properties": {"message": {"type": "string", "minLength": 1, "maxLength": 1000}, "is_anonymous": {"type": "boolean", "default": false}}
      },
      "SupportSent": {
        "type": "object",
        "required": ["message", "karma_earned", "karma"],
        "properties": {
          "message": {"$ref": "#/components/schemas/SupportMessage"},
          "karma_earned": {"type": "integer"},
          "karma": {"$ref": "#/components/schemas/Karma"}
        }
      }
    }
  }
}
"""#
}
