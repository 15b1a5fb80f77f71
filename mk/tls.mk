# Optional TLS (issue #10): common/tls.c reaches OpenSSL through common/ossl.c, which
# dlopens libssl/libcrypto on first use in dynamic builds (an agent that never speaks
# TLS does not map them: ~1.7 MiB of RSS) and links them in static builds.
ifeq ($(CONFIG_TLS),y)
ifeq ($(CONFIG_STATIC),y)
AGENT_LIBS += -lssl -lcrypto
COLLECTOR_LIBS += -lssl -lcrypto
TEST_LIBS += -lssl -lcrypto
else
AGENT_LIBS += -ldl
COLLECTOR_LIBS += -ldl
TEST_LIBS += -ldl
endif
endif
