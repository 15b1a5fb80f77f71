# Optional TLS (issue #10) and token authentication: common/tls.c and common/auth.c
# reach OpenSSL through common/ossl.c, which dlopens libssl/libcrypto on first use in
# dynamic builds (an agent that never authenticates or speaks TLS does not map them:
# ~1.7 MiB of RSS) and links them in static builds.
ifneq ($(CONFIG_TLS)$(CONFIG_AUTH),)
ifeq ($(CONFIG_STATIC),y)
AGENT_LIBS += $(if $(CONFIG_TLS),-lssl) -lcrypto
COLLECTOR_LIBS += $(if $(CONFIG_TLS),-lssl) -lcrypto
TEST_LIBS += $(if $(CONFIG_TLS),-lssl) -lcrypto
else
AGENT_LIBS += -ldl
COLLECTOR_LIBS += -ldl
TEST_LIBS += -ldl
endif
endif
