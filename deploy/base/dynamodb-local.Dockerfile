# amazon/dynamodb-local for machines without a registry (scripts/base-images.sh):
# the DynamoDB Local of `make tools` on a Java runtime, laid out as the
# registry's image (working directory /home/dynamodblocal, entrypoint java).
FROM debian:bookworm-slim
# /usr/share/man/man1: the JRE's post-install links its man pages there.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --uid 1000 --create-home --home-dir /home/dynamodblocal dynamodblocal
COPY --chown=1000:1000 dynamodb /home/dynamodblocal
USER 1000
WORKDIR /home/dynamodblocal
EXPOSE 8000
ENTRYPOINT ["java"]
CMD ["-jar", "DynamoDBLocal.jar", "-inMemory"]
