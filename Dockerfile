# pbem's production image: one image, one process per container (see docker-compose.yml).
#   docker build -t pbem .
#   docker run --rm pbem --help
# The package is installed as a wheel (not an editable checkout): templates and
# migrations travel inside it (pbem/_data/), so the image needs no source tree.

# Every dependency comes from requirements/serve.txt, pinned with its hashes (refreshed by
# `./dev lock`); only pbem itself is built here, with the locked build backend.
FROM python:3.11-slim AS build
WORKDIR /src
COPY requirements ./requirements
RUN pip install --no-cache-dir --require-hashes -r requirements/serve.txt
COPY pyproject.toml README.md ./
COPY pbem ./pbem
COPY workers ./workers
COPY templates ./templates
COPY migrations ./migrations
RUN pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PBEM_DATA_DIR=/var/lib/pbem
# DejaVu Sans: the score chart's letters (pbem.mail.chart), accented names included.
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
RUN useradd --system --create-home --home-dir /var/lib/pbem --shell /usr/sbin/nologin pbem
COPY requirements/serve.txt /tmp/serve.txt
RUN pip install --no-cache-dir --require-hashes -r /tmp/serve.txt && rm /tmp/serve.txt
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-deps /wheels/*.whl && rm -rf /wheels
USER pbem
WORKDIR /var/lib/pbem
VOLUME ["/var/lib/pbem"]
# 2525: SMTP front (publish it as 25); 8025: web front.
EXPOSE 2525 8025
ENTRYPOINT ["pbem"]
CMD ["serve"]
