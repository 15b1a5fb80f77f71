# Optional TLS (issue #10): common/tls.c links OpenSSL libssl only with CONFIG_TLS=y.
ifeq ($(CONFIG_TLS),y)
AGENT_LIBS += -lssl -lcrypto
COLLECTOR_LIBS += -lssl -lcrypto
TEST_LIBS += -lssl -lcrypto
endif
