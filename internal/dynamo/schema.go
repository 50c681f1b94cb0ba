package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tableSpec is the desired shape of one table.
type tableSpec struct {
	name    string
	indexes []string // GSI names; each GSIx has hash GSIxPK and range GSIxSK, projection ALL
	ttlAttr string   // "" = no TTL
}

func (db *DB) specs() []tableSpec {
	return []tableSpec{
		{name: db.tables.Main, indexes: []string{indexGSI1, indexGSI2, indexGSI3}, ttlAttr: attrTTL},
		{name: db.tables.Users, indexes: []string{indexGSI1, indexGSI2, indexGSI3}, ttlAttr: attrTTL},
		{name: db.tables.Plans, indexes: []string{indexGSI1}},
	}
}

func gsiKeyAttrs(index string) (pk, sk string) { return index + "PK", index + "SK" }

func gsiDefinition(index string) types.GlobalSecondaryIndex {
	pk, sk := gsiKeyAttrs(index)
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(index),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
	}
}

func attrDefs(indexes []string) []types.AttributeDefinition {
	defs := []types.AttributeDefinition{
		{AttributeName: aws.String(attrPK), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String(attrSK), AttributeType: types.ScalarAttributeTypeS},
	}
	for _, ix := range indexes {
		pk, sk := gsiKeyAttrs(ix)
		defs = append(defs,
			types.AttributeDefinition{AttributeName: aws.String(pk), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String(sk), AttributeType: types.ScalarAttributeTypeS})
	}
	return defs
}

// MigrateReport says what Migrate changed.
type MigrateReport struct {
	Created      []string // tables created
	IndexesAdded []string // "table/index"
	TTLEnabled   []string // tables whose TTL was turned on
}

// Migrate creates the three tables, adds any missing index to an existing
// table and turns TTL on where the schema wants it. It is idempotent: a second
// run changes nothing. It returns EINTERNAL when DynamoDB refuses.
func (db *DB) Migrate(ctx context.Context) (MigrateReport, error) {
	var rep MigrateReport
	for _, spec := range db.specs() {
		if err := db.migrateTable(ctx, spec, &rep); err != nil {
			return rep, translate(err, "migrate "+spec.name)
		}
	}
	return rep, nil
}

func (db *DB) migrateTable(ctx context.Context, spec tableSpec, rep *MigrateReport) error {
	desc, err := db.describe(ctx, spec.name)
	if err != nil {
		return err
	}
	if desc == nil {
		gsis := make([]types.GlobalSecondaryIndex, len(spec.indexes))
		for i, ix := range spec.indexes {
			gsis[i] = gsiDefinition(ix)
		}
		_, err := db.client.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:              aws.String(spec.name),
			BillingMode:            types.BillingModePayPerRequest,
			AttributeDefinitions:   attrDefs(spec.indexes),
			KeySchema:              []types.KeySchemaElement{{AttributeName: aws.String(attrPK), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(attrSK), KeyType: types.KeyTypeRange}},
			GlobalSecondaryIndexes: gsis,
		})
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) { // in use: a concurrent migrate created it
			return err
		}
		if err == nil {
			rep.Created = append(rep.Created, spec.name)
		}
		if desc, err = db.waitActive(ctx, spec.name); err != nil {
			return err
		}
	}
	// Upgrade a table that lacks an index. DynamoDB accepts one new GSI per
	// UpdateTable call, and only when the previous one is active.
	for _, ix := range spec.indexes {
		if hasIndex(desc, ix) {
			continue
		}
		pk, sk := gsiKeyAttrs(ix)
		_, err := db.client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(spec.name),
			AttributeDefinitions: []types.AttributeDefinition{
				{AttributeName: aws.String(pk), AttributeType: types.ScalarAttributeTypeS},
				{AttributeName: aws.String(sk), AttributeType: types.ScalarAttributeTypeS},
			},
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName:  aws.String(ix),
				KeySchema:  gsiDefinition(ix).KeySchema,
				Projection: gsiDefinition(ix).Projection,
			}}},
		})
		if err != nil {
			return fmt.Errorf("add index %s: %w", ix, err)
		}
		rep.IndexesAdded = append(rep.IndexesAdded, spec.name+"/"+ix)
		if desc, err = db.waitActive(ctx, spec.name); err != nil {
			return err
		}
	}
	if spec.ttlAttr != "" {
		ttl, err := db.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(spec.name)})
		if err != nil {
			return err
		}
		d := ttl.TimeToLiveDescription
		if d == nil || d.TimeToLiveStatus == types.TimeToLiveStatusDisabled || aws.ToString(d.AttributeName) != spec.ttlAttr {
			_, err := db.client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
				TableName:               aws.String(spec.name),
				TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(spec.ttlAttr), Enabled: aws.Bool(true)},
			})
			if err != nil {
				return fmt.Errorf("enable TTL: %w", err)
			}
			rep.TTLEnabled = append(rep.TTLEnabled, spec.name)
		}
	}
	return nil
}

// describe returns the table's description, or nil if it does not exist.
func (db *DB) describe(ctx context.Context, name string) (*types.TableDescription, error) {
	out, err := db.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	var rnf *types.ResourceNotFoundException
	if errors.As(err, &rnf) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return out.Table, nil
}

// waitActive waits until the table and all its indexes are ACTIVE.
func (db *DB) waitActive(ctx context.Context, name string) (*types.TableDescription, error) {
	for delay := 50 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		desc, err := db.describe(ctx, name)
		if err != nil {
			return nil, err
		}
		if desc != nil && desc.TableStatus == types.TableStatusActive && allIndexesActive(desc) {
			return desc, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

func hasIndex(desc *types.TableDescription, name string) bool {
	return slices.ContainsFunc(desc.GlobalSecondaryIndexes, func(g types.GlobalSecondaryIndexDescription) bool {
		return aws.ToString(g.IndexName) == name
	})
}

func allIndexesActive(desc *types.TableDescription) bool {
	for _, g := range desc.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}

// TableInfo is what DescribeTable says about a table's keys, for operators
// and tests checking the schema against design.md §4.
type TableInfo struct {
	Name string
	// Keys are "PK HASH", "SK RANGE".
	Keys []string
	// Indexes maps an index name to its keys and projection, e.g.
	// ["GSI1PK HASH", "GSI1SK RANGE", "ALL"].
	Indexes map[string][]string
	// TTLAttribute is the enabled TTL attribute, "" if none.
	TTLAttribute string
}

// Describe returns the key schema of the three tables as DynamoDB reports it.
func (db *DB) Describe(ctx context.Context) ([]TableInfo, error) {
	var infos []TableInfo
	for _, spec := range db.specs() {
		desc, err := db.describe(ctx, spec.name)
		if err != nil {
			return nil, translate(err, "describe")
		}
		if desc == nil {
			return nil, translate(&types.ResourceNotFoundException{Message: aws.String(spec.name)}, "describe "+spec.name)
		}
		info := TableInfo{Name: spec.name, Indexes: map[string][]string{}}
		for _, k := range desc.KeySchema {
			info.Keys = append(info.Keys, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
		}
		for _, g := range desc.GlobalSecondaryIndexes {
			var ks []string
			for _, k := range g.KeySchema {
				ks = append(ks, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
			}
			if g.Projection != nil {
				ks = append(ks, string(g.Projection.ProjectionType))
			}
			info.Indexes[aws.ToString(g.IndexName)] = ks
		}
		ttl, err := db.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(spec.name)})
		if err != nil {
			return nil, translate(err, "describe TTL")
		}
		if d := ttl.TimeToLiveDescription; d != nil && d.TimeToLiveStatus == types.TimeToLiveStatusEnabled {
			info.TTLAttribute = aws.ToString(d.AttributeName)
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// DropTables deletes the three tables (tests and `make clean` only).
func (db *DB) DropTables(ctx context.Context) error {
	for _, spec := range db.specs() {
		_, err := db.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(spec.name)})
		var rnf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &rnf) {
			return translate(err, "drop "+spec.name)
		}
	}
	return nil
}
