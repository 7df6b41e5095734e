#ifndef COLONY_CRDKAFKA_SHIM_H
#define COLONY_CRDKAFKA_SHIM_H

#include <librdkafka/rdkafka.h>
#include <string.h>

/* rd_kafka_producev is variadic and does not import into Swift; this builds the
 * rd_kafka_vu_t array for rd_kafka_produceva. The payload and key are copied by
 * librdkafka (RD_KAFKA_MSG_F_COPY), so the caller's buffers may go right after. */
static inline rd_kafka_error_t *colony_rd_kafka_produce(
    rd_kafka_t *rk,
    const char *topic,
    const void *key, size_t key_len,
    const void *value, size_t value_len,
    rd_kafka_headers_t *headers, /* ownership passes to librdkafka on success */
    void *opaque)
{
    rd_kafka_vu_t vus[6];
    memset(vus, 0, sizeof(vus));
    vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    vus[0].u.cstr = topic;
    vus[1].vtype = RD_KAFKA_VTYPE_KEY;
    vus[1].u.mem.ptr = (void *)key;
    vus[1].u.mem.size = key_len;
    vus[2].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[2].u.mem.ptr = (void *)value;
    vus[2].u.mem.size = value_len;
    vus[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vus[3].u.i = RD_KAFKA_MSG_F_COPY;
    vus[4].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vus[4].u.ptr = opaque;
    size_t count = 5;
    if (headers != NULL) {
        vus[5].vtype = RD_KAFKA_VTYPE_HEADERS;
        vus[5].u.headers = headers;
        count = 6;
    }
    return rd_kafka_produceva(rk, vus, count);
}

#endif
